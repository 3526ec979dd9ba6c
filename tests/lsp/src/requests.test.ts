// SPDX-License-Identifier: Apache-2.0
/*
 * requests.test.ts — stagd/* requests through vscode-jsonrpc: results,
 * cancellation, unknown methods, bad params, concurrency and large messages.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { CancellationTokenSource, ResponseError } from 'vscode-languageserver-protocol/node';
import { isError, withSession } from './daemon';


test('stagd/version names the API and the transports', async () => {
  await withSession(async (s) => {
    const v = (await s.connection.sendRequest('stagd/version')) as { version: string; api: string; features: string[] };
    assert.match(v.version, /^\d+\.\d+\.\d+/);
    assert.equal(v.api, 'stagd.v1');
    assert.ok(v.features.includes('lsp'), JSON.stringify(v.features));
  });
});

test('stagd/ping echoes its payload after delayMs', async () => {
  await withSession(async (s) => {
    assert.deepEqual(await s.connection.sendRequest('stagd/ping', { payload: 'hello' }), { payload: 'hello' });
    const started = Date.now();
    assert.deepEqual(await s.connection.sendRequest('stagd/ping', { delayMs: 200, payload: 'late' }), { payload: 'late' });
    assert.ok(Date.now() - started >= 190, `answered after ${Date.now() - started} ms`);
  });
});

test('stagd/health and stagd/listDevices answer', async () => {
  await withSession(async (s) => {
    assert.deepEqual(await s.connection.sendRequest('stagd/health', {}), { status: 'SERVING' });
    const devices = (await s.connection.sendRequest('stagd/listDevices', {})) as { devices?: Array<{ name?: string }> };
    assert.ok((devices.devices ?? []).length >= 1, JSON.stringify(devices));
  });
});

test('$/cancelRequest on a long ping → -32800, long before the delay ends', async () => {
  await withSession(async (s) => {
    const source = new CancellationTokenSource();
    const started = Date.now();
    const ping = s.connection.sendRequest('stagd/ping', { delayMs: 8000, payload: 'never' }, source.token);
    setTimeout(() => source.cancel(), 200);
    await assert.rejects(ping, isError(-32800));
    assert.ok(Date.now() - started < 4000, `cancelled after ${Date.now() - started} ms`);
    // The session goes on.
    assert.deepEqual(await s.connection.sendRequest('stagd/ping', { payload: 'after' }), { payload: 'after' });
  });
});

test('an unknown method → -32601 naming it; an unknown notification is ignored', async () => {
  await withSession(async (s) => {
    await assert.rejects(s.connection.sendRequest('stagd/noSuchMethod', {}), isError(-32601, /stagd\/noSuchMethod/));
    await s.connection.sendNotification('stagd/noSuchNotification', { x: 1 });
    assert.deepEqual(await s.connection.sendRequest('stagd/ping', { payload: 'still here' }), { payload: 'still here' });
  });
});

test('params that do not fit → -32602 with data.status INVALID_ARGUMENT naming the field', async () => {
  await withSession(async (s) => {
    await assert.rejects(s.connection.sendRequest('stagd/ping', { delayMs: 'soon' }), (e: unknown) => {
      isError(-32602)(e);
      const err = e as ResponseError<{ status?: string }>;
      assert.equal(err.data?.status, 'INVALID_ARGUMENT');
      assert.match(err.message, /delayMs|delay_ms/);
      return true;
    });
    await assert.rejects(s.connection.sendRequest('stagd/ping', { payload: 'x', colour: 'red' }), isError(-32602, /colour/));
  });
});

test('a ping delay above --max-ping-delay-ms is an error, not a long wait', async () => {
  await withSession(
    async (s) => {
      const started = Date.now();
      await assert.rejects(s.connection.sendRequest('stagd/ping', { delayMs: 60000 }), (e: unknown) => {
        isError(-32000, /60000 exceeds the limit of 1000 ms \(max-ping-delay-ms\)/)(e);
        assert.deepEqual((e as ResponseError<unknown>).data, { status: 'INVALID_ARGUMENT' });
        return true;
      });
      assert.ok(Date.now() - started < 2000);
    },
    { args: ['--max-ping-delay-ms', '1000'] },
  );
});

test('concurrent requests are answered by id, a short one not behind a long one', async () => {
  await withSession(async (s) => {
    const slow = s.connection.sendRequest('stagd/ping', { delayMs: 600, payload: 'slow' });
    const started = Date.now();
    const fast = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.connection.sendRequest('stagd/ping', { payload: `p${i}` })),
    );
    assert.ok(Date.now() - started < 500, `fast pings took ${Date.now() - started} ms`);
    assert.deepEqual(
      fast,
      Array.from({ length: 20 }, (_, i) => ({ payload: `p${i}` })),
    );
    assert.deepEqual(await slow, { payload: 'slow' });
  });
});

test('a 2 MiB payload with multi-byte characters round-trips', async () => {
  await withSession(async (s) => {
    const payload = 'ä→𝔸 staged '.repeat(150_000);
    assert.ok(Buffer.byteLength(payload) > 2 * 1024 * 1024);
    assert.deepEqual(await s.connection.sendRequest('stagd/ping', { payload }), { payload });
  });
});

test('stagd/stats counts the calls made to the daemon', async () => {
  await withSession(async (s) => {
    for (let i = 0; i < 3; i++) {
      await s.connection.sendRequest('stagd/ping', { payload: 'count me' });
    }
    const stats = (await s.connection.sendRequest('stagd/stats', {})) as {
      methods?: Array<{ method: string; calls?: string; errors?: string }>;
    };
    const ping = stats.methods?.find((m) => m.method === 'Ping');
    // 64-bit counters are strings in proto3 JSON; zero counters are left out.
    assert.deepEqual({ calls: ping?.calls, errors: ping?.errors }, { calls: '3', errors: undefined }, JSON.stringify(stats));
  });
});
