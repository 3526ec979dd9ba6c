// SPDX-License-Identifier: Apache-2.0
/*
 * settings.test.ts — settings → how the server is reached (stdio or TCP).
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  DEFAULT_SETTINGS,
  initializationOptions,
  needsRestart,
  parseAddress,
  readSettings,
  serverLaunch,
  SettingsError,
} from '../settings';

const from = (values: Record<string, unknown>) => (key: string) => values[key];

test('defaults: no path (the lookup of daemonPath.ts decides), `--lsp --stdio` with what it found', () => {
  const s = readSettings(from({}));
  assert.deepEqual(s, DEFAULT_SETTINGS);
  assert.deepEqual(serverLaunch(s, '/usr/bin/stagd'), {
    transport: 'stdio',
    command: '/usr/bin/stagd',
    args: ['--lsp', '--stdio'],
  });
  assert.throws(() => serverLaunch(s), /no stagd daemon: set stagd\.path/);
});

test('a configured path is the command, trimmed; blank means look for one', () => {
  assert.deepEqual(serverLaunch(readSettings(from({ path: ' /opt/stagd/bin/stagd ' }))), {
    transport: 'stdio',
    command: '/opt/stagd/bin/stagd',
    args: ['--lsp', '--stdio'],
  });
  assert.equal(readSettings(from({ path: '   ' })).path, '');
});

test('values of the wrong type fall back to the defaults', () => {
  assert.deepEqual(readSettings(from({ path: 42, address: null, style: false, pythonEnv: null, token: 7 })), DEFAULT_SETTINGS);
});

test('a token goes in initializationOptions; a CA makes the TCP connection TLS', () => {
  const s = readSettings(from({ address: 'gpu-node:7421', token: ' secret-token-0123 ', tlsCa: '/etc/ca.pem' }));
  assert.equal(initializationOptions(s)['token'], 'secret-token-0123');
  assert.equal(initializationOptions(DEFAULT_SETTINGS)['token'], undefined);
  assert.deepEqual(serverLaunch(s), {
    transport: 'tcp',
    host: 'gpu-node',
    port: 7421,
    tls: { ca: '/etc/ca.pem', cert: '', key: '' },
  });
  assert.throws(() => readSettings(from({ tlsCert: '/c.pem' })), /go together/);
  assert.ok(needsRestart(DEFAULT_SETTINGS, s));
});

test('an address means TCP, whatever the path', () => {
  assert.deepEqual(serverLaunch(readSettings(from({ path: '/x/stagd', address: 'gpu-node:7421' }))), {
    transport: 'tcp',
    host: 'gpu-node',
    port: 7421,
  });
});

test('style snek is accepted, an unknown style is an error naming the choices', () => {
  assert.equal(readSettings(from({ style: 'snek' })).style, 'snek');
  assert.throws(() => readSettings(from({ style: 'tracing' })), (e: unknown) => {
    assert.ok(e instanceof SettingsError);
    assert.match(e.message, /stagd\.style must be one of autograph, snek, got 'tracing'/);
    return true;
  });
});

test('address forms: host:port, [v6]:port, :port', () => {
  assert.deepEqual(parseAddress('127.0.0.1:7421'), { host: '127.0.0.1', port: 7421 });
  assert.deepEqual(parseAddress('[::1]:9000'), { host: '::1', port: 9000 });
  assert.deepEqual(parseAddress(':7421'), { host: '127.0.0.1', port: 7421 });
  assert.deepEqual(parseAddress(' localhost:1 '), { host: 'localhost', port: 1 });
});

test('bad addresses are errors that say what is wrong', () => {
  const cases: Array<[string, RegExp]> = [
    ['localhost', /no port/],
    ['localhost:http', /port must be a number, got 'http'/],
    ['localhost:0', /from 1 to 65535, got 0/],
    ['localhost:70000', /from 1 to 65535, got 70000/],
    ['::1:7421', /IPv6 host in brackets/],
    ['host:-1', /must be a number/],
  ];
  for (const [address, message] of cases) {
    assert.throws(() => parseAddress(address), message, address);
  }
});

test('only path, address, python and pythonEnv changes need a restart', () => {
  const base = readSettings(from({}));
  assert.equal(needsRestart(base, { ...base, style: 'snek' }), false);
  assert.equal(needsRestart(base, { ...base, path: '/other/stagd' }), true);
  assert.equal(needsRestart(base, { ...base, address: 'h:1' }), true);
  assert.equal(needsRestart(base, { ...base, pythonEnv: { PYTHONPATH: '/p' } }), true);
});

const LENS_COMMANDS = ['stagd.showConvertedCode', 'stagd.showGraph'];

test('stagd.python goes to the server as initializationOptions.python (trimmed), and restarts it', () => {
  const base = readSettings(from({}));
  // the extension runs the lens commands itself: the server must not announce them
  assert.deepEqual(initializationOptions(base), { style: 'autograph', clientCommands: LENS_COMMANDS });
  const py = readSettings(from({ python: ' /opt/venv/bin/python ', style: 'snek' }));
  assert.equal(py.python, '/opt/venv/bin/python');
  assert.deepEqual(initializationOptions(py), {
    style: 'snek',
    clientCommands: LENS_COMMANDS,
    python: '/opt/venv/bin/python',
  });
  assert.equal(needsRestart(base, py), true);
  assert.equal(needsRestart(base, readSettings(from({ python: 42 }))), false);
});

test('stagd.pythonEnv goes to the server as initializationOptions.pythonEnv; a workspace checkout fills it in', () => {
  const env = readSettings(from({ pythonEnv: { PYTHONPATH: '/src/stagd/clients/python' } }));
  assert.deepEqual(initializationOptions(env, '/ws/clients/python'), {
    style: 'autograph',
    clientCommands: LENS_COMMANDS,
    pythonEnv: { PYTHONPATH: '/src/stagd/clients/python' },
  });
  // empty: the clients/python of the checkout whose build the daemon came from
  assert.deepEqual(initializationOptions(readSettings(from({})), '/ws/clients/python'), {
    style: 'autograph',
    clientCommands: LENS_COMMANDS,
    pythonEnv: { PYTHONPATH: '/ws/clients/python' },
  });
  for (const bad of [[], 'PYTHONPATH=/x', { PYTHONPATH: 3 }, { 'A=B': 'x' }]) {
    assert.throws(
      () => readSettings(from({ pythonEnv: bad })),
      (e: unknown) => e instanceof SettingsError && /stagd\.pythonEnv/.test(e.message),
      JSON.stringify(bad),
    );
  }
});
