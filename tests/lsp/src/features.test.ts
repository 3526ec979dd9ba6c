// SPDX-License-Identifier: Apache-2.0
/*
 * features.test.ts — stagd's language features through vscode-jsonrpc:
 * publishDiagnostics (syntax errors as the Parse RPC reports them, unconvertible
 * constructs with the converter's hint), debounced re-analysis that publishes only
 * the newest version, documentSymbol, codeLens, hover, stagd/convertedCode,
 * stagd/graph, and the errors for unknown documents and malformed params.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  InitializeRequest,
  InitializedNotification,
  PublishDiagnosticsNotification,
  ResponseError,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import { assertNoCrashReport, type Diag, isError, LspSession } from './daemon';

const URI = 'file:///work/example.py';

const SOURCE = [
  'import numpy as np', //                         0
  'LIMIT = 3', //                                  1
  '', //                                           2
  'def f(x, n):', //                               3
  '    y = x * 2', //                              4
  '    if y > 0:', //                              5
  '        x = x - 1', //                          6
  '    i = 0', //                                  7
  '    while i < n:', //                           8
  '        i += 1', //                             9
  '        if i > 5:', //                          10
  '            break', //                          11
  '    if LIMIT > 2:', //                          12
  '        return x', //                           13
  '    return x', //                               14
  '', //                                           15
  'class Model:', //                               16
  '    def step(self, a):', //                     17
  '        def inner(b):', //                      18
  '            return b + 1', //                   19
  '        return inner(a)', //                    20
  '', //                                           21
  'def gen():', //                                 22
  '    yield 1', //                                23
  '',
].join('\n');


/** A session whose publishDiagnostics notifications are collected in order. */
class FeatureSession {
  readonly s: LspSession;
  readonly published: PublishDiagnosticsParams[] = [];
  private waiters: Array<() => void> = [];

  constructor() {
    this.s = new LspSession();
    this.s.connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      this.published.push(p);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  async initialize(initializationOptions: object = {}, general: object = {}): Promise<void> {
    await this.s.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities: { general },
      initializationOptions,
    });
    await this.s.connection.sendNotification(InitializedNotification.type, {});
  }

  open(text: string, uri = URI, version = 1): Promise<void> {
    return this.s.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version, text },
    });
  }

  /** The first publish for uri with this version, waiting up to ms. */
  async diagnostics(version: number, uri = URI, ms = 5000): Promise<PublishDiagnosticsParams> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.published.find((p) => p.uri === uri && p.version === version);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`no diagnostics for ${uri} v${version}; got ${JSON.stringify(this.published)}`);
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  request<T>(method: string, params: object): Promise<T> {
    return this.s.connection.sendRequest(method, params) as Promise<T>;
  }

  dispose(): void {
    this.s.dispose();
  }
}

async function withFeatures(body: (f: FeatureSession) => Promise<void>, options: object = {}): Promise<void> {
  const f = new FeatureSession();
  try {
    await f.initialize(options);
    await body(f);
    assertNoCrashReport(f.s.daemon.stderr);
  } finally {
    f.dispose();
  }
}


test('initialize announces hover, documentSymbol, codeLens and the stagd/convertedCode, stagd/graph requests', async () => {
  const s = new LspSession();
  try {
    const r = await s.initialize();
    assert.equal(r.capabilities.hoverProvider, true);
    assert.equal(r.capabilities.documentSymbolProvider, true);
    assert.deepEqual(r.capabilities.codeLensProvider, { resolveProvider: false });
    const methods = (r.capabilities.experimental as { stagd: { methods: string[] } }).stagd.methods;
    assert.ok(methods.includes('stagd/convertedCode') && methods.includes('stagd/graph'), JSON.stringify(methods));
  } finally {
    s.dispose();
  }
});

test('didOpen → diagnostics for an unconvertible construct, with the converter hint', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    const p = await f.diagnostics(1);
    const diags = p.diagnostics as unknown as Diag[];
    assert.equal(diags.length, 1, JSON.stringify(diags));
    const d = diags[0] as Diag;
    assert.equal(d.source, 'stagd');
    assert.equal(d.code, 'unsupported-construct');
    assert.equal(d.range.start.line, 23, JSON.stringify(d.range)); // the `yield`
    assert.match(d.message, /function 'gen' is not converted: .*yield/);
    assert.ok(d.data?.hint && d.data.hint.length > 0, JSON.stringify(d));
    assert.ok(d.message.endsWith(`hint: ${d.data?.hint}`), d.message);
  });
});

test('a syntax error → one "syntax" diagnostic with the Parse RPC message and location; fixing it clears it', async () => {
  await withFeatures(
    async (f) => {
      await f.open('def ok(x):\n    return x\n');
      assert.deepEqual((await f.diagnostics(1)).diagnostics, []);
      // incremental edit: "return x" → "return (x"
      await f.s.connection.sendNotification('textDocument/didChange', {
        textDocument: { uri: URI, version: 2 },
        contentChanges: [{ range: { start: { line: 1, character: 11 }, end: { line: 1, character: 11 } }, text: '(' }],
      });
      const bad = (await f.diagnostics(2)).diagnostics as unknown as Diag[];
      assert.equal(bad.length, 1, JSON.stringify(bad));
      const d = bad[0] as Diag;
      assert.equal(d.code, 'syntax');
      assert.equal(d.severity, 1);
      // The Parse RPC on the same text reports the same message and position.
      await assert.rejects(
        f.request('stagd/parse', { source: 'def ok(x):\n    return (x\n', filename: 'example.py' }),
        (e: unknown) => {
          assert.ok(e instanceof ResponseError);
          const data = e.data as { line: number; column: number };
          assert.ok(e.message.endsWith(d.message), `${e.message} vs ${d.message}`);
          assert.equal(d.range.start.line, data.line - 1);
          assert.equal(d.range.start.character, data.column - 1);
          return true;
        },
      );
      await f.s.connection.sendNotification('textDocument/didChange', {
        textDocument: { uri: URI, version: 3 },
        contentChanges: [{ text: 'def ok(x):\n    return x\n' }],
      });
      assert.deepEqual((await f.diagnostics(3)).diagnostics, []);
    },
    { debounceMs: 0 },
  );
});

test('re-analysis is debounced: edits within the quiet period are coalesced, the newest version is published last', async () => {
  await withFeatures(
    async (f) => {
      await f.open('x = 1\n');
      await f.diagnostics(1);
      for (let v = 2; v <= 6; v++) {
        // versions 2..5 end in a syntax error, version 6 is valid
        const text = v < 6 ? `def f(:\n    pass  # ${v}\n` : 'def f():\n    pass\n';
        await f.s.connection.sendNotification('textDocument/didChange', {
          textDocument: { uri: URI, version: v },
          contentChanges: [{ text }],
        });
      }
      const last = await f.diagnostics(6);
      assert.deepEqual(last.diagnostics, []);
      await new Promise((r) => setTimeout(r, 400)); // nothing older may come late
      // v2 came after a quiet period: analysed at once (leading edge), published unless
      // v3 superseded it first; v3..v5 came within the debounce window: never analysed.
      const versions = f.published.map((p) => p.version);
      assert.ok(
        JSON.stringify(versions) === '[1,6]' || JSON.stringify(versions) === '[1,2,6]',
        JSON.stringify(versions),
      );
    },
    { debounceMs: 300 },
  );
});

test('didClose clears the diagnostics; requests on a closed document fail clearly', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    await f.diagnostics(1);
    await f.s.connection.sendNotification('textDocument/didClose', { textDocument: { uri: URI } });
    const deadline = Date.now() + 5000;
    while (!f.published.some((p) => p.uri === URI && p.version === undefined) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const cleared = f.published.find((p) => p.uri === URI && p.version === undefined);
    assert.deepEqual(cleared?.diagnostics, []);
    await assert.rejects(
      f.request('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 0 } }),
      isError(-32602, /unknown document 'file:\/\/\/work\/example\.py'.*not open/),
    );
  });
});

test('textDocument/documentSymbol: functions, classes, methods and nested functions', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    type Sym = { name: string; kind: number; selectionRange: { start: { line: number; character: number } }; children: Sym[] };
    const syms = await f.request<Sym[]>('textDocument/documentSymbol', { textDocument: { uri: URI } });
    const shape = (s: Sym): unknown => [s.name, s.kind, ...s.children.map(shape)];
    assert.deepEqual(syms.map(shape), [
      ['f', 12],
      ['Model', 5, ['step', 6, ['inner', 12]]],
      ['gen', 12],
    ]);
    const step = syms[1]?.children[0];
    assert.deepEqual(step?.selectionRange.start, { line: 17, character: 8 });
  });
});

test('positions count UTF-16 code units by default and UTF-8 bytes when negotiated', async () => {
  // "def café" ends at UTF-16 unit 8 and UTF-8 byte 9; "𝔸" is 2 UTF-16 units and 4 bytes
  const text = 'def café(): pass\n';
  const broken = 's = "𝔸" +\n';
  for (const [general, nameEnd, errorAt] of [
    [{}, 8, 10],
    [{ positionEncodings: ['utf-8'] }, 9, 12],
  ] as const) {
    const f = new FeatureSession();
    try {
      await f.initialize({}, general);
      await f.open(text);
      await f.open(broken, 'file:///work/broken.py');
      type Sym = { name: string; selectionRange: { end: { character: number } } };
      const syms = await f.request<Sym[]>('textDocument/documentSymbol', { textDocument: { uri: URI } });
      assert.equal(syms[0]?.name, 'café');
      assert.equal(syms[0]?.selectionRange.end.character, nameEnd, JSON.stringify(general));
      const d = (await f.diagnostics(1, 'file:///work/broken.py')).diagnostics[0];
      assert.equal(d?.code, 'syntax');
      assert.deepEqual(d?.range.start, { line: 0, character: errorAt }, JSON.stringify(d));
    } finally {
      f.dispose();
    }
  }
});

test('textDocument/codeLens: "Show converted code" and "Show graph" on every converted function', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    type Lens = { range: { start: { line: number } }; command: { title: string; command: string; arguments: unknown[] } };
    const lenses = await f.request<Lens[]>('textDocument/codeLens', { textDocument: { uri: URI } });
    const got = lenses.map((l) => [l.range.start.line, l.command.title, l.command.command, l.command.arguments]);
    const both = (line: number, fn: string) => [
      [line, 'Show converted code', 'stagd.showConvertedCode', [{ uri: URI, function: fn }]],
      [line, 'Show graph', 'stagd.showGraph', [{ uri: URI, function: fn }]],
    ];
    assert.deepEqual(got, [...both(3, 'f'), ...both(17, 'Model.step'), ...both(22, 'gen')]);
  });
});

test('textDocument/hover explains what is staged and why', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    const hover = async (line: number, character = 6): Promise<string | null> => {
      const r = await f.request<{ contents: { kind: string; value: string } } | null>('textDocument/hover', {
        textDocument: { uri: URI },
        position: { line, character },
      });
      if (r === null) return null;
      assert.equal(r.contents.kind, 'markdown');
      return r.contents.value;
    };
    const ifParam = await hover(5);
    assert.match(ifParam ?? '', /\*\*Staged\*\* when `x` is a staged tensor, plain Python otherwise/);
    assert.match(ifParam ?? '', /depends on parameter `x` \(through `y`\)/);
    const whileParam = await hover(8);
    assert.match(whileParam ?? '', /depends on parameter `n`/);
    assert.match(whileParam ?? '', /Loop variables when staged: \{[^}]*\bi\b/);
    // i is a loop variable of the staged while: it comes from n
    assert.match((await hover(10)) ?? '', /depends on parameter `n` \(through `i`\)/);
    const ifGlobal = await hover(12);
    assert.match(ifGlobal ?? '', /\*\*Runs in Python\*\*: the condition only reads constants\/globals \(`LIMIT` \(global\)\)/);
    assert.match((await hover(11, 13)) ?? '', /flag that the `while` loop at line 9 tests/);
    assert.match((await hover(13, 9)) ?? '', /Inside the `if` at line 13: the converter turns this return/);
    const fn = await hover(3, 4);
    assert.match(fn ?? '', /`f` is converted/);
    assert.match(fn ?? '', /line 6 `if`.*\n.*line 9 `while`/);
    assert.match((await hover(22, 4)) ?? '', /\*\*Runs in Python\*\*: function 'gen' is not converted/);
    assert.match((await hover(0, 1)) ?? 'null', /null/); // an import: nothing to say
    assert.match((await hover(1, 1)) ?? 'null', /null/);
    await assert.rejects(f.request('textDocument/hover', { textDocument: { uri: URI } }), isError(-32602, /position/));
    // an elif is an if in the orelse: named as written, with its own verdict
    const elifUri = 'file:///work/elif.py';
    await f.open('def g(a, b):\n    if a:\n        return 1\n    elif LIMIT:\n        return 2\n    return b\n', elifUri);
    const elif = await f.request<{ contents: { value: string } }>('textDocument/hover', {
      textDocument: { uri: elifUri },
      position: { line: 3, character: 6 },
    });
    assert.match(elif.contents.value, /^\*\*stagd\*\* · `elif` statement\n\n\*\*Runs in Python\*\*: the condition only reads/);
  });
});

test('stagd/convertedCode → the converted module with a 1-based source map', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    type Converted = { text: string; sourceMap: Array<{ convertedLine: number; original: { line: number; column: number } }> };
    const all = await f.request<Converted>('stagd/convertedCode', { textDocument: { uri: URI }, style: 'autograph' });
    assert.match(all.text, /^# Converted by stagd/);
    assert.match(all.text, /def f\(x, n\):/);
    assert.ok(all.sourceMap.length > 10);
    const lines = all.text.split('\n').length;
    for (const e of all.sourceMap) {
      assert.ok(e.convertedLine >= 1 && e.convertedLine <= lines, JSON.stringify(e));
      assert.ok(e.original.line >= 1 && e.original.line <= 24 && e.original.column >= 1, JSON.stringify(e));
    }
    // the `if y > 0` (line 6) maps to some converted line
    assert.ok(all.sourceMap.some((e) => e.original.line === 6), JSON.stringify(all.sourceMap));
    const snek = await f.request<Converted>('stagd/convertedCode', { textDocument: { uri: URI }, style: 'snek' });
    assert.match(snek.text, /style snek/);
    const one = await f.request<Converted>('stagd/convertedCode', { textDocument: { uri: URI }, function: 'Model.step' });
    // only Model.step is converted: f stays as written
    const plainF = 'def f(x, n):\n    y = x * 2\n    if y > 0:\n';
    assert.ok(one.text.includes(plainF) && !all.text.includes(plainF), one.text);
    assert.match(one.text, /def step\(self, a\):/);
    await assert.rejects(
      f.request('stagd/convertedCode', { textDocument: { uri: URI }, style: 'fancy' }),
      isError(-32602, /'style' must be "autograph" or "snek"/),
    );
    await assert.rejects(
      f.request('stagd/convertedCode', { textDocument: { uri: URI }, function: 'nope' }),
      isError(-32803, /no function named 'nope'/),
    );
  });
});

test('stagd/convertedCode on a document with a syntax error → RequestFailed with the location', async () => {
  await withFeatures(async (f) => {
    await f.open('def f(:\n    pass\n');
    await assert.rejects(
      f.request('stagd/convertedCode', { textDocument: { uri: URI }, style: 'autograph' }),
      isError(-32803, /cannot convert .*example\.py:1:7: invalid syntax/),
    );
  });
});

test('stagd/graph checks its params and the function before staging (staging itself: graph.test.ts)', async () => {
  await withFeatures(async (f) => {
    await f.open(SOURCE);
    await assert.rejects(
      f.request('stagd/graph', { textDocument: { uri: URI }, style: 'autograph', format: 'svg', function: 'f' }),
      isError(-32602, /'format' must be "text", "dot", "json" or "sexpr"/),
    );
    await assert.rejects(
      f.request('stagd/graph', { textDocument: { uri: URI }, style: 'autograph', format: 'dot', function: 'nope' }),
      isError(-32803, /no function named 'nope'/),
    );
  });
});

test('malformed feature params → -32602 naming what is missing', async () => {
  await withFeatures(async (f) => {
    await assert.rejects(f.request('textDocument/documentSymbol', {}), isError(-32602, /textDocument\.uri/));
    await assert.rejects(
      f.request('textDocument/codeLens', { textDocument: { uri: 42 } }),
      isError(-32602, /textDocument\.uri \(a string\)/),
    );
    await assert.rejects(
      f.s.connection.sendRequest('stagd/convertedCode', [1, 2]),
      isError(-32602, /takes an object/),
    );
    await assert.rejects(
      f.request('stagd/convertedCode', { textDocument: { uri: 'file:///never-opened.py' } }),
      isError(-32602, /unknown document 'file:\/\/\/never-opened\.py'/),
    );
  });
});

test('the client disappears while stagd/convertedCode runs on a large file → clean exit', async () => {
  const f = new FeatureSession();
  try {
    await f.initialize();
    const big = Array.from({ length: 3000 }, (_, i) => `def f${i}(x):\n    if x > ${i}:\n        x = x - 1\n    return x\n`).join('');
    await f.open(big);
    for (let i = 0; i < 8; i++) {
      void f.request('stagd/convertedCode', { textDocument: { uri: URI }, style: 'autograph' }).catch(() => undefined);
      void f.request('textDocument/hover', { textDocument: { uri: URI }, position: { line: 1, character: 5 } }).catch(
        () => undefined,
      );
    }
    await new Promise((r) => setTimeout(r, 50)); // the requests are written, the first ones run
    f.s.daemon.proc.stdout.destroy();
    f.s.daemon.proc.stdin.destroy();
    const exit = await f.s.daemon.waitExit(15_000);
    assert.equal(exit.signal, null, f.s.daemon.stderr);
    assert.ok(exit.code === 0 || exit.code === 1, `exit ${exit.code}\n${f.s.daemon.stderr}`);
    assertNoCrashReport(f.s.daemon.stderr);
  } finally {
    f.dispose();
  }
});
