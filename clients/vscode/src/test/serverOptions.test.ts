// SPDX-License-Identifier: Apache-2.0
/*
 * serverOptions.test.ts — settings → the language client's server options:
 * the stdio executable, and the TCP connection against a real local listener.
 */

import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { test } from 'node:test';
import { connectTcp, connectTls, serverOptionsFor } from '../serverOptions';
import { readSettings, serverLaunch } from '../settings';

test('stdio: the executable is stagd.path with --lsp --stdio and no transport field', () => {
  const options = serverOptionsFor(serverLaunch(readSettings((k) => ({ path: '/usr/bin/stagd' })[k])));
  assert.deepEqual(options, { command: '/usr/bin/stagd', args: ['--lsp', '--stdio'] });
});

test('tcp: the options connect to stagd.address and stream both ways', async () => {
  const server = net.createServer((s) => s.pipe(s)); // echo
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const options = serverOptionsFor(serverLaunch(readSettings((k) => ({ address: `127.0.0.1:${port}` })[k])));
    assert.equal(typeof options, 'function');
    const { reader, writer } = await (options as () => ReturnType<typeof connectTcp>)();
    assert.equal(reader, writer);
    const echoed = new Promise<string>((r) => reader.once('data', (b: Buffer) => r(b.toString())));
    writer.write('Content-Length: 2\r\n\r\n{}');
    assert.equal(await echoed, 'Content-Length: 2\r\n\r\n{}');
    writer.destroy();
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('tcp: a refused connection is an error naming the address', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r)); // nothing listens there now
  await assert.rejects(connectTcp('127.0.0.1', port), new RegExp(`cannot connect to stagd at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
});

test('tls: an unreadable CA file is an error naming the setting, before any connection', async () => {
  await assert.rejects(
    connectTls('127.0.0.1', 1, { ca: '/nonexistent/ca.pem', cert: '', key: '' }),
    /stagd TLS settings: .*nonexistent/,
  );
});

test('tls: a launch with TLS files connects with TLS', () => {
  const opts = serverOptionsFor({ transport: 'tcp', host: 'h', port: 1, tls: { ca: '/ca.pem', cert: '', key: '' } });
  assert.equal(typeof opts, 'function');
});
