// SPDX-License-Identifier: Apache-2.0
/*
 * commands.test.ts — what makes the code lenses work in any LSP client, against the
 * real daemon: workspace/executeCommand runs the lens commands (announced in
 * executeCommandProvider, except those initializationOptions.clientCommands keeps for
 * the client), staging errors are published as diagnostics on the function (beside
 * the converter's, until the function stages or the text changes), and
 * initializationOptions.pythonEnv reaches the staging helper.
 */

import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  InitializeRequest,
  InitializedNotification,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  type InitializeResult,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import { assertNoCrashReport, type Diag, isError, LspSession } from './daemon';

const URI = 'file:///work/lenses.py';
// out/commands.test.js → the repository root is three folders up.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const PYTHON = process.env['STAGD_TEST_PYTHON'] ?? '/usr/bin/python3';
const PYTHONPATH = path.join(ROOT, 'clients', 'python');

const SOURCE = [
  'def square(x):', //                   0
  '    return x * x', //                 1
  '', //                                 2
  'def pick(x, n):', //                  3
  '    return x * [1.0, 2.0, 3.0][n]', // 4: indexing a list with a staged n fails (a list: the helper's turn)
  '', //                                 5
  'def boom(x):', //                     6
  '    return len(x, 3)', //             7
  '', //                                 8
  'def gen(x):', //                      9
  '    yield x', //                      10
  '',
].join('\n');


interface Lens {
  range: { start: { line: number } };
  command: { title: string; command: string; arguments: Array<{ uri: string; function: string }> };
}


/** A session that collects publishDiagnostics and window/logMessage. */
class Session {
  readonly s: LspSession;
  readonly published: PublishDiagnosticsParams[] = [];
  readonly logs: string[] = [];

  constructor(env: NodeJS.ProcessEnv = { PYTHONPATH }) {
    this.s = new LspSession([], env);
    this.s.connection.onNotification(PublishDiagnosticsNotification.type, (p) => this.published.push(p));
    this.s.connection.onNotification(LogMessageNotification.type, (p) => this.logs.push(p.message));
  }

  async initialize(options: object = {}): Promise<InitializeResult> {
    const r = await this.s.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      initializationOptions: { python: PYTHON, ...options },
    });
    await this.s.connection.sendNotification(InitializedNotification.type, {});
    return r;
  }

  open(text = SOURCE, version = 1): Promise<void> {
    return this.s.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri: URI, languageId: 'python', version, text },
    });
  }

  request<T>(method: string, params: object): Promise<T> {
    return this.s.connection.sendRequest(method, params) as Promise<T>;
  }

  execute<T>(command: string, args: object): Promise<T> {
    return this.request<T>('workspace/executeCommand', { command, arguments: [args] });
  }

  /** Waits until a publish satisfies pred (searching from index `from`); returns it. */
  async waitPublish(pred: (p: PublishDiagnosticsParams) => boolean, from = 0, ms = 10_000): Promise<PublishDiagnosticsParams> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.published.slice(from).find(pred);
      if (found !== undefined) return found;
      if (Date.now() > deadline) {
        throw new Error(`no matching publishDiagnostics; got ${JSON.stringify(this.published)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  dispose(): void {
    this.s.dispose();
  }
}

async function withSession(body: (s: Session) => Promise<void>, options: object = {}, env?: NodeJS.ProcessEnv): Promise<void> {
  const s = new Session(env);
  try {
    await s.initialize(options);
    await body(s);
    assertNoCrashReport(s.s.daemon.stderr);
  } finally {
    s.dispose();
  }
}

const stagingOf = (p: PublishDiagnosticsParams, fn: string): Diag[] =>
  (p.diagnostics as Diag[]).filter((d) => d.code === 'staging-error' && d.data?.function === fn);

test('initialize announces the lens commands in executeCommandProvider, minus clientCommands', async () => {
  for (const [clientCommands, want] of [
    [undefined, ['stagd.showConvertedCode', 'stagd.showGraph']],
    [['stagd.showGraph'], ['stagd.showConvertedCode']],
    [['stagd.showConvertedCode', 'stagd.showGraph', 'other.command'], []],
  ] as const) {
    const s = new Session();
    try {
      const r = await s.initialize(clientCommands === undefined ? {} : { clientCommands });
      assert.deepEqual(r.capabilities.executeCommandProvider, { commands: want });
    } finally {
      s.dispose();
    }
  }
});

test('every code lens runs through workspace/executeCommand', async () => {
  await withSession(async (s) => {
    await s.open();
    const lenses = await s.request<Lens[]>('textDocument/codeLens', { textDocument: { uri: URI } });
    const square = lenses.filter((l) => l.command.arguments[0]?.function === 'square');
    assert.deepEqual(square.map((l) => l.command.command).sort(), ['stagd.showConvertedCode', 'stagd.showGraph']);
    for (const lens of square) {
      const r = await s.request<{ text: string; function?: string }>('workspace/executeCommand', lens.command);
      if (lens.command.command === 'stagd.showConvertedCode') {
        const direct = await s.request<{ text: string }>('stagd/convertedCode', {
          textDocument: { uri: URI },
          function: 'square',
        });
        assert.equal(r.text, direct.text);
        assert.match(r.text, /def square\(x\):/);
      } else {
        assert.equal(r.function, 'square');
        assert.match(r.text, /graph @square\(%x/);
      }
    }
    // the argument's other fields pass through: a format, static arguments
    const dot = await s.execute<{ text: string; format: string }>('stagd.showGraph', {
      uri: URI,
      function: 'pick',
      format: 'dot',
      args: { n: 2 },
    });
    assert.equal(dot.format, 'dot');
    assert.match(dot.text, /^digraph /);
  });
});

test('workspace/executeCommand errors: unknown command, bad arguments, unknown document → -32602', async () => {
  await withSession(async (s) => {
    await s.open();
    await assert.rejects(
      s.execute('stagd.frobnicate', { uri: URI, function: 'square' }),
      isError(-32602, /unknown command 'stagd\.frobnicate' \(stagd serves stagd\.showConvertedCode and stagd\.showGraph\)/),
    );
    await assert.rejects(
      s.request('workspace/executeCommand', { command: 'stagd.showGraph', arguments: [] }),
      isError(-32602, /takes arguments \[\{uri, function\}\]/),
    );
    await assert.rejects(s.request('workspace/executeCommand', {}), isError(-32602, /needs params\.command/));
    await assert.rejects(
      s.execute('stagd.showGraph', { uri: 'file:///not/open.py', function: 'f' }),
      isError(-32602, /unknown document 'file:\/\/\/not\/open\.py'/),
    );
    await assert.rejects(s.execute('stagd.showGraph', { uri: URI, function: 'nope' }), isError(-32803, /no function named 'nope'/));
  });
});

test('staging errors are published as diagnostics on the function until it stages or the text changes', async () => {
  await withSession(async (s) => {
    await s.open();
    // the analysis: the converter's warning on gen, no staging errors yet
    const first = await s.waitPublish((p) => p.version === 1);
    assert.ok((first.diagnostics as Diag[]).some((d) => d.code === 'unsupported-construct' && d.range.start.line === 10));
    assert.equal((first.diagnostics as Diag[]).filter((d) => d.code === 'staging-error').length, 0);

    let mark = s.published.length;
    await assert.rejects(s.execute('stagd.showGraph', { uri: URI, function: 'pick' }), isError(-32803, /staging pick failed/));
    const withPick = await s.waitPublish((p) => stagingOf(p, 'pick').length === 1, mark);
    const d = stagingOf(withPick, 'pick')[0] as Diag;
    assert.equal(d.range.start.line, 4, JSON.stringify(d)); // in the user's file, not the converted code
    assert.equal(d.severity, 1);
    assert.equal(d.source, 'stagd');
    assert.match(d.message, /staging pick failed: TypeError/);
    assert.equal(withPick.version, 1);
    // the converter's diagnostics stay beside it
    assert.ok((withPick.diagnostics as Diag[]).some((x) => x.code === 'unsupported-construct'));

    // a second function's error joins the first (through stagd/graph, not only the command)
    mark = s.published.length;
    await assert.rejects(s.request('stagd/graph', { textDocument: { uri: URI }, function: 'boom' }));
    const both = await s.waitPublish((p) => stagingOf(p, 'boom').length === 1, mark);
    assert.equal(stagingOf(both, 'pick').length, 1);
    assert.equal((stagingOf(both, 'boom')[0] as Diag).range.start.line, 7);

    // pick stages with a static n: its error goes, boom's stays
    mark = s.published.length;
    await s.execute('stagd.showGraph', { uri: URI, function: 'pick', args: { n: 1 } });
    const fixed = await s.waitPublish((p) => stagingOf(p, 'pick').length === 0, mark);
    assert.equal(stagingOf(fixed, 'boom').length, 1);

    // an edit: the new text's analysis has no staging errors (they were about the old text)
    await s.s.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri: URI, version: 2 },
      contentChanges: [{ text: SOURCE + '\n# edited\n' }],
    });
    const edited = await s.waitPublish((p) => p.version === 2);
    assert.equal((edited.diagnostics as Diag[]).filter((x) => x.code === 'staging-error').length, 0);
    // a staging of an unchanged-but-edited text is published with version 2
    mark = s.published.length;
    await assert.rejects(s.execute('stagd.showGraph', { uri: URI, function: 'boom' }));
    const again = await s.waitPublish((p) => stagingOf(p, 'boom').length === 1, mark);
    assert.equal(again.version, 2);
  });
});

test('initializationOptions.pythonEnv reaches the staging helper; without it the error says what to set', async () => {
  const noPath = { PYTHONPATH: '' };
  await withSession(
    async (s) => {
      await s.open();
      await assert.rejects(
        s.execute('stagd.showGraph', { uri: URI, function: 'pick', args: { n: 1 } }),
        isError(-32803, /No module named 'stagd'.*initializationOptions\.pythonEnv.*stagd\.pythonEnv/),
      );
    },
    {},
    noPath,
  );
  await withSession(
    async (s) => {
      await s.open();
      const r = await s.execute<{ function: string }>('stagd.showGraph', { uri: URI, function: 'pick', args: { n: 1 } });
      assert.equal(r.function, 'pick');
    },
    { pythonEnv: { PYTHONPATH, STAGD_UNUSED: 'x' } },
    noPath,
  );
  await withSession(
    async (s) => {
      await s.open();
      await s.waitPublish((p) => p.version === 1);
      assert.ok(s.logs.some((l) => /pythonEnv must be an object of environment variables/.test(l)), s.logs.join('\n'));
    },
    { pythonEnv: { PYTHONPATH: 1 } },
  );
});
