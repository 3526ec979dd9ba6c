// SPDX-License-Identifier: Apache-2.0
/*
 * daemonPath.ts — which stagd the extension starts when `stagd.address` is empty,
 * the order docs/editors.md gives: the `stagd.path` setting; `stagd` on the PATH;
 * the usual install places; a build of this repository in a workspace folder
 * (build-release/, then build/). Not found: an error that names every place looked
 * at and the settings to set. A daemon found in a workspace build also tells where
 * that checkout's Python package is, so the staging helper can import it.
 *
 * Pure: the file system and the environment come in through `DaemonLookup`, so the
 * unit tests run under plain Node.
 */

import * as path from 'node:path';
import { SettingsError } from './settings';

export const INSTALL_PATHS: readonly string[] = ['/usr/local/bin/stagd', '/usr/bin/stagd', '/opt/stagd/bin/stagd'];
export const WORKSPACE_BUILDS: readonly string[] = ['build-release/server/stagd', 'build/server/stagd'];

export interface DaemonLookup {
  /** The PATH to search (`:`-separated). */
  readonly searchPath: string;
  /** Absolute paths of the workspace folders. */
  readonly workspaceFolders: readonly string[];
  isExecutable(file: string): boolean;
  isFile(file: string): boolean;
}

export interface FoundDaemon {
  readonly path: string;
  readonly from: 'setting' | 'PATH' | 'install' | 'workspace';
  /** A workspace build's checkout: its clients/python, when the stagd package is there. */
  readonly pythonPath?: string;
}

/** `name` looked up in the PATH, as a shell would; undefined when absent. */
export function onPath(name: string, lookup: DaemonLookup): string | undefined {
  for (const dir of lookup.searchPath.split(':')) {
    const file = path.join(dir === '' ? '.' : dir, name);
    if (lookup.isExecutable(file)) {
      return file;
    }
  }
  return undefined;
}

export function findDaemon(setting: string, lookup: DaemonLookup): FoundDaemon {
  if (setting !== '') {
    const file = setting.includes('/') ? (lookup.isExecutable(setting) ? setting : undefined) : onPath(setting, lookup);
    if (file === undefined) {
      throw new SettingsError(
        `stagd.path is '${setting}', which is not an executable file${setting.includes('/') ? '' : ' on the PATH'}: ` +
          'set it to the stagd daemon (e.g. /usr/bin/stagd or build-release/server/stagd of a checkout), or clear it ' +
          'to let the extension look for one',
      );
    }
    return { path: file, from: 'setting' };
  }
  const fromPath = onPath('stagd', lookup);
  if (fromPath !== undefined) {
    return { path: fromPath, from: 'PATH' };
  }
  const installed = INSTALL_PATHS.find((f) => lookup.isExecutable(f));
  if (installed !== undefined) {
    return { path: installed, from: 'install' };
  }
  const looked = ['`stagd` on the PATH', ...INSTALL_PATHS];
  for (const folder of lookup.workspaceFolders) {
    for (const build of WORKSPACE_BUILDS) {
      const file = path.join(folder, build);
      looked.push(file);
      if (lookup.isExecutable(file)) {
        const pkg = path.join(folder, 'clients', 'python');
        return lookup.isFile(path.join(pkg, 'stagd', '__init__.py'))
          ? { path: file, from: 'workspace', pythonPath: pkg }
          : { path: file, from: 'workspace' };
      }
    }
  }
  throw new SettingsError(
    `cannot find the stagd daemon: set stagd.path to it (or stagd.address to a daemon started with ` +
      `--lsp-listen host:port). Looked for ${looked.join(', ')}`,
  );
}
