// SPDX-License-Identifier: Apache-2.0
/*
 * lifecycle.test.ts — initialize, the capabilities stagd announces, requests
 * out of order, and shutdown/exit with the exit codes LSP asks for.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  ExitNotification,
  InitializeRequest,
  ResponseError,
  ShutdownRequest,
} from 'vscode-languageserver-protocol/node';
import { assertNoCrashReport, LspSession, withSession } from './daemon';

const STAGD_METHODS = ['stagd/version', 'stagd/health', 'stagd/listDevices', 'stagd/stats', 'stagd/ping'];

test('initialize → serverInfo {name: "stagd", version} and the stagd/* methods', async () => {
  const session = new LspSession();
  try {
    const result = await session.initialize();
    assert.equal(result.serverInfo?.name, 'stagd');
    assert.match(result.serverInfo?.version ?? '', /^\d+\.\d+\.\d+/);
    const methods = (result.capabilities.experimental as { stagd?: { methods?: unknown } } | undefined)?.stagd?.methods;
    assert.ok(Array.isArray(methods), `capabilities.experimental.stagd.methods: ${JSON.stringify(result.capabilities)}`);
    for (const m of STAGD_METHODS) {
      assert.ok(methods.includes(m), `${m} is not announced: ${JSON.stringify(methods)}`);
    }
    // The version request agrees with serverInfo.
    const version = (await session.connection.sendRequest('stagd/version')) as { version?: string };
    assert.equal(version.version, result.serverInfo?.version);
  } finally {
    session.dispose();
  }
});

test('a request before initialize is refused with -32002', async () => {
  await withSession(
    async (s) => {
      await assert.rejects(s.connection.sendRequest('stagd/version'), (e: unknown) => {
        assert.ok(e instanceof ResponseError, String(e));
        assert.equal(e.code, -32002);
        return true;
      });
      // …and initialize still works afterwards.
      const r = await s.connection.sendRequest(InitializeRequest.type, { processId: null, rootUri: null, capabilities: {} });
      assert.equal(r.serverInfo?.name, 'stagd');
    },
    { initialize: false },
  );
});

test('shutdown → null, later requests -32600, exit → status 0, clean stderr', async () => {
  const session = new LspSession();
  try {
    await session.initialize();
    assert.equal(await session.connection.sendRequest(ShutdownRequest.type), null);
    await assert.rejects(session.connection.sendRequest('stagd/version'), (e: unknown) => {
      assert.ok(e instanceof ResponseError);
      assert.equal(e.code, -32600);
      return true;
    });
    await session.connection.sendNotification(ExitNotification.type);
    const exit = await session.daemon.waitExit();
    assert.deepEqual(exit, { code: 0, signal: null }, session.daemon.stderr);
    assertNoCrashReport(session.daemon.stderr);
  } finally {
    session.dispose();
  }
});

test('exit without shutdown → status 1, as LSP asks', async () => {
  const session = new LspSession();
  try {
    await session.initialize();
    await session.connection.sendNotification(ExitNotification.type);
    const exit = await session.daemon.waitExit();
    assert.deepEqual(exit, { code: 1, signal: null }, session.daemon.stderr);
    assertNoCrashReport(session.daemon.stderr);
  } finally {
    session.dispose();
  }
});

test('shutdown waits for a request in flight, which is answered', async () => {
  const session = new LspSession();
  try {
    await session.initialize();
    const ping = session.connection.sendRequest('stagd/ping', { delayMs: 300, payload: 'in flight' });
    const shutdown = session.connection.sendRequest(ShutdownRequest.type);
    assert.deepEqual(await ping, { payload: 'in flight' });
    assert.equal(await shutdown, null);
    await session.connection.sendNotification(ExitNotification.type);
    assert.equal((await session.daemon.waitExit()).code, 0);
  } finally {
    session.dispose();
  }
});
