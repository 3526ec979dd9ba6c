// SPDX-License-Identifier: Apache-2.0
/*
 * disconnect.test.ts — the client disappears while a request runs: the
 * daemon must notice, finish or drop the request and exit cleanly (status 0
 * or 1, never a signal or a sanitizer report). Writing the reply to a closed
 * stdout must not kill it with SIGPIPE.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { assertNoCrashReport } from './daemon';
import { RawPeer } from './rawFrames';

async function disappearMidRequest(closeStdout: boolean): Promise<void> {
  const peer = new RawPeer();
  try {
    await peer.initialize();
    peer.send({ jsonrpc: '2.0', id: 1, method: 'stagd/ping', params: { delayMs: 3000, payload: 'orphan' } });
    await new Promise((r) => setTimeout(r, 200)); // the ping is now running in a worker
    if (closeStdout) {
      peer.daemon.proc.stdout.destroy(); // the reply has nowhere to go
    }
    peer.daemon.proc.stdin.destroy();
    const exit = await peer.daemon.waitExit(15_000);
    assert.equal(exit.signal, null, `stagd died of ${exit.signal}; stderr:\n${peer.daemon.stderr}`);
    assert.ok(exit.code === 0 || exit.code === 1, `exit status ${exit.code}; stderr:\n${peer.daemon.stderr}`);
    assertNoCrashReport(peer.daemon.stderr);
    assert.match(peer.daemon.stderr, /stopped/);
  } finally {
    peer.dispose();
  }
}

test('stdin closed while a delayed ping runs → clean exit', async () => {
  await disappearMidRequest(false);
});

test('stdin and stdout both closed while a delayed ping runs (client process gone) → clean exit', async () => {
  await disappearMidRequest(true);
});

test('stdin closed right after initialize, nothing in flight → clean exit', async () => {
  const peer = new RawPeer();
  try {
    await peer.initialize();
    peer.daemon.proc.stdin.end();
    const exit = await peer.daemon.waitExit(5000);
    assert.equal(exit.signal, null);
    assert.ok(exit.code === 0 || exit.code === 1, `exit status ${exit.code}`);
    assertNoCrashReport(peer.daemon.stderr);
  } finally {
    peer.dispose();
  }
});

test('stdin closed in the middle of a frame → clean exit', async () => {
  const peer = new RawPeer();
  try {
    await peer.initialize();
    peer.write('Content-Length: 100\r\n\r\n{"jsonrpc":"2.0","id":3,');
    await new Promise((r) => setTimeout(r, 100));
    peer.daemon.proc.stdin.end();
    const exit = await peer.daemon.waitExit(5000);
    assert.equal(exit.signal, null);
    assert.ok(exit.code === 0 || exit.code === 1, `exit status ${exit.code}`);
    assertNoCrashReport(peer.daemon.stderr);
  } finally {
    peer.dispose();
  }
});
