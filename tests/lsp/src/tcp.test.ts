// SPDX-License-Identifier: Apache-2.0
/*
 * tcp.test.ts — the extension's two ways to reach the daemon, driven with the
 * extension's own launch code: `stagd.path` (a `--lsp --stdio` child) and
 * `stagd.address` (TCP to `stagd --lsp-listen`), where every connection is
 * its own session and `exit` closes only that one.
 */

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import {
  createProtocolConnection,
  ExitNotification,
  InitializeRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node';
import { assertNoCrashReport, Daemon, stagdBin } from './daemon';
import { loadExtensionLaunch } from './extension';

const ext = loadExtensionLaunch();

async function initialize(c: ProtocolConnection): Promise<string | undefined> {
  const r = await c.sendRequest(InitializeRequest.type, { processId: null, rootUri: null, capabilities: {} });
  await c.sendNotification('initialized', {});
  return r.serverInfo?.name;
}

/** Starts `stagd --lsp-listen 127.0.0.1:0` and returns it with the port it logs. */
async function tcpDaemon(): Promise<{ daemon: Daemon; port: number }> {
  const daemon = new Daemon(['--lsp-listen', '127.0.0.1:0', '--listen', '127.0.0.1:0']);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const m = /serving LSP on 127\.0\.0\.1:(\d+)/.exec(daemon.stderr);
    if (m !== null) {
      return { daemon, port: Number(m[1]) };
    }
    if (Date.now() > deadline || daemon.proc.exitCode !== null) {
      daemon.kill();
      throw new Error(`stagd did not report its LSP port; stderr:\n${daemon.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('stagd.path: the extension starts `stagd --lsp --stdio` and talks to it', async () => {
  const options = ext.serverOptionsFor(ext.serverLaunch(ext.readSettings((k) => ({ path: stagdBin() })[k])));
  assert.ok(typeof options !== 'function');
  assert.deepEqual(options.args, ['--lsp', '--stdio']);
  const child = spawn(options.command, options.args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const c = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  c.onError(() => undefined);
  c.listen();
  try {
    assert.equal(await initialize(c), 'stagd');
    assert.equal(await c.sendRequest(ShutdownRequest.type), null);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await c.sendNotification(ExitNotification.type);
    assert.equal(await exited, 0);
  } finally {
    c.dispose();
    child.kill('SIGKILL');
  }
});

test('stagd.address: each TCP connection is a session; exit closes only its own', async () => {
  const { daemon, port } = await tcpDaemon();
  const connect = async (): Promise<ProtocolConnection> => {
    const options = ext.serverOptionsFor(ext.serverLaunch(ext.readSettings((k) => ({ address: `127.0.0.1:${port}` })[k])));
    assert.equal(typeof options, 'function');
    const { reader, writer } = await (options as () => Promise<{ reader: import('node:net').Socket; writer: import('node:net').Socket }>)();
    const c = createProtocolConnection(new StreamMessageReader(reader), new StreamMessageWriter(writer));
    c.onError(() => undefined);
    c.listen();
    return c;
  };
  const a = await connect();
  const b = await connect();
  try {
    assert.equal(await initialize(a), 'stagd');
    // b is not initialized yet: its own session state, whatever a did.
    await assert.rejects(b.sendRequest('stagd/version'), (e: unknown) => (e as { code?: number }).code === -32002);
    assert.equal(await initialize(b), 'stagd');
    const closed = new Promise<void>((r) => a.onClose(() => r()));
    await a.sendRequest(ShutdownRequest.type);
    await a.sendNotification(ExitNotification.type);
    await closed;
    assert.deepEqual(await b.sendRequest('stagd/ping', { payload: 'b lives' }), { payload: 'b lives' });
    assert.equal(daemon.proc.exitCode, null, 'exit over TCP must not stop the daemon');
    daemon.proc.kill('SIGTERM');
    assert.deepEqual(await daemon.waitExit(), { code: 0, signal: null });
    assertNoCrashReport(daemon.stderr);
  } finally {
    a.dispose();
    b.dispose();
    daemon.kill();
  }
});

test('stagd.address with nothing listening: a clear error naming the address', async () => {
  const { daemon, port } = await tcpDaemon();
  daemon.proc.kill('SIGTERM');
  await daemon.waitExit();
  const options = ext.serverOptionsFor(ext.serverLaunch(ext.readSettings((k) => ({ address: `127.0.0.1:${port}` })[k])));
  await assert.rejects((options as () => Promise<unknown>)(), new RegExp(`cannot connect to stagd at 127\\.0\\.0\\.1:${port}`));
});
