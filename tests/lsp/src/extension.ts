// SPDX-License-Identifier: Apache-2.0
/*
 * extension.ts — loads the VS Code extension's compiled launch logic
 * (clients/vscode/out: settings.js, serverOptions.js), which needs no VS Code
 * instance, so the tests can check that the settings really reach the daemon.
 * The extension must be compiled first (tests/lsp/run.sh does it).
 */

import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import * as path from 'node:path';

export interface ExtensionLaunch {
  readSettings(get: (key: string) => unknown): unknown;
  serverLaunch(settings: unknown): unknown;
  serverOptionsFor(launch: unknown): { command: string; args: string[] } | (() => Promise<{ reader: Socket; writer: Socket }>);
}

export function loadExtensionLaunch(): ExtensionLaunch {
  const out = path.resolve(__dirname, '..', '..', '..', 'clients', 'vscode', 'out');
  for (const f of ['settings.js', 'serverOptions.js']) {
    if (!existsSync(path.join(out, f))) {
      throw new Error(`${path.join(out, f)} is missing: compile the extension first (npm run compile in clients/vscode)`);
    }
  }
  const settings = require(path.join(out, 'settings.js')) as Pick<ExtensionLaunch, 'readSettings' | 'serverLaunch'>;
  const options = require(path.join(out, 'serverOptions.js')) as Pick<ExtensionLaunch, 'serverOptionsFor'>;
  return { readSettings: settings.readSettings, serverLaunch: settings.serverLaunch, serverOptionsFor: options.serverOptionsFor };
}
