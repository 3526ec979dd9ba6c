// SPDX-License-Identifier: Apache-2.0
/*
 * client.ts — the language client for stagd: server options per the launch
 * the settings decide (serverOptions.ts), and the documents it syncs (Python
 * files on disk and unsaved ones, never the extension's converted views).
 */

import type { OutputChannel } from 'vscode';
import { LanguageClient, type LanguageClientOptions } from 'vscode-languageclient/node';
import { serverOptionsFor } from './serverOptions';
import type { ServerLaunch } from './settings';

export function createClient(
  launch: ServerLaunch,
  outputChannel: OutputChannel,
  initializationOptions: Record<string, unknown> = {},
): LanguageClient {
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
    ],
    outputChannel,
    initializationOptions,
  };
  return new LanguageClient('stagd', 'stagd', serverOptionsFor(launch), clientOptions);
}
