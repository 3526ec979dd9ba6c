// SPDX-License-Identifier: Apache-2.0
/*
 * malformed.test.ts — bytes no client library would send, written raw to the
 * daemon's stdin: each gets the error docs/api.md promises (or is skipped),
 * and a well-formed request right after is answered.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { assertNoCrashReport } from './daemon';
import { frame, RawPeer, type Message } from './rawFrames';

async function withPeer(body: (p: RawPeer) => Promise<void>, args: readonly string[] = []): Promise<void> {
  const peer = new RawPeer(args);
  try {
    await peer.initialize();
    await body(peer);
    // Whatever came before, the session still serves, and ends cleanly.
    const pong = await peer.request(9999, 'stagd/ping', { payload: 'alive' });
    assert.deepEqual(pong, { jsonrpc: '2.0', id: 9999, result: { payload: 'alive' } });
    peer.send({ jsonrpc: '2.0', id: 10000, method: 'shutdown' });
    assert.deepEqual(await peer.next(), { jsonrpc: '2.0', id: 10000, result: null });
    peer.send({ jsonrpc: '2.0', method: 'exit' });
    assert.deepEqual(await peer.daemon.waitExit(), { code: 0, signal: null });
    assertNoCrashReport(peer.daemon.stderr);
  } finally {
    peer.dispose();
  }
}

function assertError(m: Message, code: number, id: unknown, message?: RegExp): void {
  assert.equal(m['jsonrpc'], '2.0');
  assert.equal(m.id, id, JSON.stringify(m));
  assert.equal(m.error?.code, code, JSON.stringify(m));
  if (message !== undefined) {
    assert.match(m.error?.message ?? '', message);
  }
}

test('garbage bytes instead of a header → -32700, id null, then the next frame is read', async () => {
  await withPeer(async (p) => {
    p.write('this is not an LSP header\r\n\r\n');
    assertError(await p.next(), -32700, null, /framing|header/i);
  });
});

test('a header without Content-Length → -32700, id null', async () => {
  await withPeer(async (p) => {
    p.write('Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n');
    assertError(await p.next(), -32700, null);
  });
});

test('binary noise glued to the front of a request: the request is still answered', async () => {
  await withPeer(async (p) => {
    p.write(Buffer.concat([Buffer.from([0, 1, 2, 0xff, 0xfe, 13, 10, 13, 10]), frame({ jsonrpc: '2.0', id: 5, method: 'stagd/ping', params: { payload: 'p' } })]));
    const replies = [await p.next(), await p.next()];
    const error = replies.find((m) => m.error !== undefined);
    const pong = replies.find((m) => m.id === 5);
    assert.ok(error !== undefined, JSON.stringify(replies));
    assertError(error, -32700, null);
    assert.deepEqual(pong?.result, { payload: 'p' });
  });
});

test('a body that is not JSON → -32700, id null', async () => {
  await withPeer(async (p) => {
    p.write(frame('{"jsonrpc": "2.0", "id": 1, "method": '));
    assertError(await p.next(), -32700, null, /not valid JSON/);
  });
});

test('JSON that is not a request → -32600', async () => {
  await withPeer(async (p) => {
    p.write(frame('42'));
    assertError(await p.next(), -32600, null);
    p.write(frame({ jsonrpc: '1.0', id: 7, method: 'stagd/ping' }));
    assertError(await p.next(), -32600, 7);
    p.write(frame({ jsonrpc: '2.0', id: 8 }));
    assertError(await p.next(), -32600, 8);
    p.write(frame({ jsonrpc: '2.0', id: { nested: true }, method: 'stagd/ping' }));
    assertError(await p.next(), -32600, null);
  });
});

test('a batch array is refused with -32600', async () => {
  await withPeer(async (p) => {
    p.write(frame([{ jsonrpc: '2.0', id: 1, method: 'stagd/ping', params: {} }]));
    assertError(await p.next(), -32600, null);
  });
});

test('a Content-Length above --max-message-bytes → -32600 naming the limit; the body is skipped', async () => {
  await withPeer(
    async (p) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'stagd/ping', params: { payload: 'x'.repeat(8192) } });
      p.write(frame(body));
      const m = await p.next();
      assertError(m, -32600, null, /4096/);
    },
    ['--max-message-bytes', '4096'],
  );
});

test('a frame split into single bytes is reassembled', async () => {
  await withPeer(async (p) => {
    const bytes = frame({ jsonrpc: '2.0', id: 21, method: 'stagd/ping', params: { payload: 'drip' } });
    for (const b of bytes) {
      p.write(Buffer.from([b]));
    }
    assert.deepEqual(await p.next(), { jsonrpc: '2.0', id: 21, result: { payload: 'drip' } });
  });
});

test('many frames in one write are all answered, in order for immediate requests', async () => {
  await withPeer(async (p) => {
    const frames = Array.from({ length: 50 }, (_, i) =>
      frame({ jsonrpc: '2.0', id: 100 + i, method: 'stagd/version' }),
    );
    p.write(Buffer.concat(frames));
    const ids = new Set<unknown>();
    for (let i = 0; i < 50; i++) {
      const m = await p.next();
      assert.ok(m.result !== undefined, JSON.stringify(m));
      ids.add(m.id);
    }
    assert.equal(ids.size, 50);
  });
});
