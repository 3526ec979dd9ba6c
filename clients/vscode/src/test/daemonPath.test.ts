// SPDX-License-Identifier: Apache-2.0
/*
 * daemonPath.test.ts — which daemon the extension starts (docs/editors.md): the
 * setting, PATH, the install places, a workspace build; the error that names where
 * it looked. A fake file system stands in for the real one.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { findDaemon, type DaemonLookup } from '../daemonPath';
import { SettingsError } from '../settings';

function fs(executables: string[], files: string[] = [], searchPath = '/usr/local/bin:/usr/bin:/bin', folders = ['/ws']): DaemonLookup {
  return {
    searchPath,
    workspaceFolders: folders,
    isExecutable: (f) => executables.includes(f),
    isFile: (f) => executables.includes(f) || files.includes(f),
  };
}

test('the stagd.path setting wins: a path as it is, a bare name on the PATH', () => {
  const lookup = fs(['/opt/x/stagd', '/usr/bin/stagd', '/bin/stagd-dev']);
  assert.deepEqual(findDaemon('/opt/x/stagd', lookup), { path: '/opt/x/stagd', from: 'setting' });
  assert.deepEqual(findDaemon('stagd-dev', lookup), { path: '/bin/stagd-dev', from: 'setting' });
});

test('a stagd.path that is not executable is an error, never a silent fallback', () => {
  for (const [setting, message] of [
    ['/nowhere/stagd', /stagd\.path is '\/nowhere\/stagd', which is not an executable file: set it/],
    ['nosuch', /stagd\.path is 'nosuch', which is not an executable file on the PATH/],
  ] as const) {
    assert.throws(() => findDaemon(setting, fs(['/usr/bin/stagd'])), (e: unknown) => e instanceof SettingsError && message.test(e.message));
  }
});

test('empty setting: PATH first, then /usr/local/bin, /usr/bin, /opt/stagd/bin', () => {
  assert.deepEqual(findDaemon('', fs(['/home/u/bin/stagd', '/usr/bin/stagd'], [], '/home/u/bin:/usr/bin')), {
    path: '/home/u/bin/stagd',
    from: 'PATH',
  });
  assert.deepEqual(findDaemon('', fs(['/usr/bin/stagd'], [], '/bin')), { path: '/usr/bin/stagd', from: 'install' });
  assert.deepEqual(findDaemon('', fs(['/opt/stagd/bin/stagd', '/usr/local/bin/stagd'], [], '/bin')), {
    path: '/usr/local/bin/stagd',
    from: 'install',
  });
  assert.deepEqual(findDaemon('', fs(['/opt/stagd/bin/stagd'], [], '/bin')), { path: '/opt/stagd/bin/stagd', from: 'install' });
});

test('then a build in a workspace folder, release before test, with its checkout\'s Python package', () => {
  const both = fs(['/ws/build/server/stagd', '/ws/build-release/server/stagd'], ['/ws/clients/python/stagd/__init__.py'], '/bin');
  assert.deepEqual(findDaemon('', both), {
    path: '/ws/build-release/server/stagd',
    from: 'workspace',
    pythonPath: '/ws/clients/python',
  });
  assert.deepEqual(findDaemon('', fs(['/b/build/server/stagd'], [], '/bin', ['/a', '/b'])), {
    path: '/b/build/server/stagd',
    from: 'workspace',
  });
});

test('nothing found: the error lists every place looked at and what to set', () => {
  assert.throws(
    () => findDaemon('', fs([], [], '/bin', ['/ws'])),
    (e: unknown) => {
      assert.ok(e instanceof SettingsError);
      assert.equal(
        e.message,
        'cannot find the stagd daemon: set stagd.path to it (or stagd.address to a daemon started with --lsp-listen ' +
          'host:port). Looked for `stagd` on the PATH, /usr/local/bin/stagd, /usr/bin/stagd, /opt/stagd/bin/stagd, ' +
          '/ws/build-release/server/stagd, /ws/build/server/stagd',
      );
      return true;
    },
  );
});
