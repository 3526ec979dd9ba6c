// SPDX-License-Identifier: Apache-2.0
/*
 * graph.test.ts — stagd/graph through vscode-jsonrpc against the real daemon: a
 * function inside the daemon's Python subset (docs/pyfront.md) is staged by the daemon
 * itself (`stagedBy: "daemon"`); any other function named (or under a position) is
 * converted, staged by the Python helper
 * (`python3 -m stagd.runtime.lsp_stage`, with clients/python on PYTHONPATH) and
 * dumped; the graph id it answers runs with stagd/execute. Error paths: staging
 * errors and unsupported constructs located in the user's source, a missing
 * interpreter, the time limit, bad params; `$/cancelRequest` on a long staging
 * (-32800, the helper killed, the session going on).
 */

import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  CancellationTokenSource,
  InitializeRequest,
  InitializedNotification,
  ResponseError,
} from 'vscode-languageserver-protocol/node';
import { assertNoCrashReport, type Diag, isError, LspSession } from './daemon';

const URI = 'file:///work/model.py';
// out/graph.test.js → the repository root is three folders up.
const ROOT = path.resolve(__dirname, '..', '..', '..');
// Debian's interpreter has the stagd package's dependencies (scripts/install-deps.sh).
const PYTHON = process.env['STAGD_TEST_PYTHON'] ?? '/usr/bin/python3';

const SOURCE = [
  'print("loading model.py")', //                   0: printed while loading: must not corrupt the answer
  '', //                                            1
  'def power(x, n):', //                            2
  '    if n == 0:', //                              3
  '        return [1][0]', //                       4: a list: outside the daemon's subset
  '    else:', //                                   5
  '        return x * power(x, n - 1)', //          6
  '', //                                            7
  'def square_if_positive(x):', //                  8
  '    if x > 0:', //                               9
  '        x = x * x', //                           10
  '    else:', //                                   11
  '        x = 0.0', //                             12
  '    return x', //                                13
  '', //                                            14
  'def boom(x):', //                                15
  '    y = [x][0] + 1', //                          16: outside the subset: the helper's turn
  '    z = len(y, 3)', //                           17
  '    return z', //                                18
  '', //                                            19
  'def gen(x):', //                                 20
  '    yield x', //                                 21
  '', //                                            22
  'def slow(x):', //                                23
  '    i = [0][0]', //                              24: outside the subset: the helper's turn
  '    while i < 10 ** 9:', //                      25
  '        i += 1', //                              26
  '    return x + i', //                            27
  '',
].join('\n');



interface GraphResult {
  function: string;
  format: string;
  text: string;
  sexpr: string;
  graphId: string;
  params: string[];
  diagnostics: Diag[];
  stagedBy: string;
}

/** A located stagd/graph failure: -32803 with data.diagnostics[0] on `line`. */
function isLocated(line: number, code: string, message: RegExp) {
  return (e: unknown): boolean => {
    isError(-32803, message)(e);
    const data = (e as ResponseError<{ line: number; diagnostics: Diag[] }>).data;
    assert.ok(data !== undefined, 'error.data');
    assert.equal(data.line, line + 1, JSON.stringify(data));
    assert.equal(data.diagnostics.length, 1, JSON.stringify(data));
    const d = data.diagnostics[0] as Diag;
    assert.equal(d.range.start.line, line, JSON.stringify(d));
    assert.equal(d.code, code);
    assert.equal(d.severity, 1);
    assert.match(d.message, message);
    return true;
  };
}

async function withGraphSession(
  body: (s: LspSession, graph: (params: object) => Promise<GraphResult>) => Promise<void>,
  options: object = {},
): Promise<void> {
  const s = new LspSession([], { PYTHONPATH: path.join(ROOT, 'clients', 'python') });
  try {
    await s.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      initializationOptions: { python: PYTHON, ...options },
    });
    await s.connection.sendNotification(InitializedNotification.type, {});
    await s.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri: URI, languageId: 'python', version: 1, text: SOURCE },
    });
    const graph = (params: object) =>
      s.connection.sendRequest('stagd/graph', { textDocument: { uri: URI }, ...params }) as Promise<GraphResult>;
    await body(s, graph);
    assertNoCrashReport(s.daemon.stderr);
  } finally {
    s.dispose();
  }
}

/** Pids of the daemon's child processes (the staging helpers running). A thread that
 * ended between the listing and the read is skipped (gRPC's threads come and go; the
 * children of an ended thread pass to another thread of the process). */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ESRCH') continue;
      throw e;
    }
    if (text !== '') out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

test('stagd/graph by name with a static argument: the S-expression, its text dump, a graph id that executes', async () => {
  await withGraphSession(async (s, graph) => {
    const r = await graph({ function: 'power', args: { n: 2 } });
    assert.equal(r.function, 'power');
    assert.equal(r.stagedBy, 'python');
    assert.equal(r.format, 'text');
    assert.deepEqual(r.params, ['x']);
    // n is static: the recursion unrolls into two multiplications (Snek Figure 6's shape)
    assert.match(r.sexpr, /^\(def power \(x\) /);
    assert.equal((r.sexpr.match(/\(\* x /g) ?? []).length, 2, r.sexpr);
    assert.doesNotMatch(r.sexpr, /\bif\b/);
    assert.match(r.text, /graph @power\(%x/);
    assert.match(r.graphId, /^g[0-9a-f]{16}$/);
    assert.deepEqual(r.diagnostics, []);
    const run = (await s.connection.sendRequest('stagd/execute', { graphId: r.graphId, argsJson: '[10]' })) as {
      resultJson: string;
    };
    assert.equal(JSON.parse(run.resultJson), 100);
  });
});

test('stagd/graph by position: the function under the cursor, staged if in DOT and JSON', async () => {
  await withGraphSession(async (s, graph) => {
    const dot = await graph({ position: { line: 11, character: 6 }, format: 'dot' });
    assert.equal(dot.function, 'square_if_positive');
    assert.equal(dot.stagedBy, 'daemon'); // inside the subset: no helper
    assert.deepEqual(children(s.daemon.proc.pid as number), []);
    assert.equal(dot.format, 'dot');
    assert.match(dot.text, /^digraph /);
    assert.match(dot.sexpr, /\(if /);
    const json = await graph({ position: { line: 8, character: 0 }, format: 'json' });
    assert.equal(json.function, 'square_if_positive');
    assert.equal(json.graphId, dot.graphId);
    const parsed = JSON.parse(json.text) as unknown;
    assert.ok(typeof parsed === 'object' && parsed !== null, json.text);
    for (const [x, want] of [
      [9.0, 81.0],
      [-9.0, 0.0],
    ]) {
      const run = (await s.connection.sendRequest('stagd/execute', {
        graphId: dot.graphId,
        argsJson: JSON.stringify([x]),
      })) as { resultJson: string };
      assert.equal(JSON.parse(run.resultJson), want);
    }
  });
});

test('stagd/graph errors are located in the user source: a staging error, an unsupported construct', async () => {
  await withGraphSession(async (_s, graph) => {
    await assert.rejects(
      graph({ function: 'boom' }),
      isLocated(17, 'staging-error', /staging boom failed: TypeError: .*len.*argument/),
    );
    await assert.rejects(
      graph({ position: { line: 21, character: 4 } }),
      isLocated(21, 'unsupported-construct', /function 'gen' is not converted: .*yield[\s\S]*hint: /),
    );
    await assert.rejects(
      graph({ function: 'power', args: { m: 1 } }),
      isLocated(2, 'unsupported-construct', /power has no parameter named 'm'/),
    );
    await assert.rejects(graph({ function: 'nope' }), isError(-32803, /no function named 'nope'/));
    await assert.rejects(graph({ position: { line: 0, character: 0 } }), isError(-32803, /no function at 1:1/));
  });
});

test('stagd/graph bad params → -32602', async () => {
  await withGraphSession(async (_s, graph) => {
    await assert.rejects(graph({ function: 'power', format: 'svg' }), isError(-32602, /'format' must be/));
    await assert.rejects(graph({ function: 'power', args: [2] }), isError(-32602, /'args' must be an object/));
    await assert.rejects(graph({}), isError(-32602, /give the function to stage as 'function'/));
    await assert.rejects(graph({ position: { line: -1 } }), isError(-32602, /'position' must be/));
  });
});

test('stagd/graph without a usable interpreter says how to configure one', async () => {
  await withGraphSession(
    async (_s, graph) => {
      await assert.rejects(
        graph({ function: 'power', args: { n: 1 } }),
        isError(-32803, /cannot start '\/nonexistent\/python3'.*initializationOptions\.python.*stagd\.python/),
      );
    },
    { python: '/nonexistent/python3' },
  );
});

test('stagd/graph stops a staging that runs past stageTimeoutMs; the session goes on', async () => {
  await withGraphSession(
    async (s, graph) => {
      const started = Date.now();
      await assert.rejects(graph({ function: 'slow' }), isError(-32803, /staging slow took longer than 1500 ms/));
      assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
      assert.deepEqual(children(s.daemon.proc.pid as number), []);
      assert.equal((await graph({ function: 'power', args: { n: 0 } })).sexpr, '(def power (x) 1)');
    },
    { stageTimeoutMs: 1500 },
  );
});

test('$/cancelRequest on a long stagd/graph → -32800 at once, the helper killed, the session goes on', async () => {
  await withGraphSession(async (s, graph) => {
    const source = new CancellationTokenSource();
    const started = Date.now();
    const pending = s.connection.sendRequest(
      'stagd/graph',
      { textDocument: { uri: URI }, function: 'slow' },
      source.token,
    );
    // cancel once the helper runs (it is a child of the daemon while it stages)
    const pid = s.daemon.proc.pid as number;
    while (children(pid).length === 0 && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(children(pid).length, 1, 'the staging helper never started');
    const cancelAt = Date.now();
    source.cancel();
    await assert.rejects(pending, isError(-32800));
    assert.ok(Date.now() - cancelAt < 3000, `cancelled after ${Date.now() - cancelAt} ms`);
    assert.deepEqual(children(pid), []);
    const r = await graph({ function: 'square_if_positive' });
    assert.equal(r.function, 'square_if_positive');
  });
});
