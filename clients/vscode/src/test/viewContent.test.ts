// SPDX-License-Identifier: Apache-2.0
/*
 * viewContent.test.ts — what the converted-code and graph views show for
 * each server answer: results, server errors (with locations) and fallbacks
 * when `dot` is missing or fails. `dot` is a stand-in script here.
 */

import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { convertedView, errorText, graphContent, settingHint, type Send } from '../viewContent';

const root = mkdtempSync(path.join(tmpdir(), 'stagd-view-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

function fakeDot(name: string, body: string): string {
  const file = path.join(root, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** A send that records its calls and answers with `answer`. */
function recorder(answer: (method: string, params: unknown) => unknown): { send: Send; calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  return {
    calls,
    send: async (method, params) => {
      calls.push([method, params]);
      return answer(method, params);
    },
  };
}

/** A JSON-RPC error as vscode-jsonrpc's ResponseError carries it. */
function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, data });
}

test('convertedView sends stagd/convertedCode with the URI and style and returns text and map', async () => {
  const r = recorder(() => ({ text: 'x = 1\n', sourceMap: [{ convertedLine: 1, original: { line: 3, column: 1 } }] }));
  const view = await convertedView(r.send, 'file:///w/a.py', 'snek', '/w/a.py');
  assert.deepEqual(r.calls, [['stagd/convertedCode', { textDocument: { uri: 'file:///w/a.py' }, style: 'snek' }]]);
  assert.equal(view.ok, true);
  assert.equal(view.text, 'x = 1\n');
  assert.deepEqual(view.sourceMap.byConverted, [{ convertedLine: 0, originalLine: 2, originalColumn: 0 }]);
});

test('a located conversion error becomes a Python comment with file:line:column', async () => {
  const r = recorder(() => {
    throw rpcError(-32000, "unsupported construct: 'yield' inside a converted loop", {
      status: 'INVALID_ARGUMENT',
      file: '/w/a.py',
      line: 4,
      column: 9,
    });
  });
  const view = await convertedView(r.send, 'file:///w/a.py', 'autograph', '/w/a.py');
  assert.equal(view.ok, false);
  assert.equal(view.sourceMap.byConverted.length, 0);
  assert.equal(
    view.text,
    "# stagd could not convert /w/a.py:\n# /w/a.py:4:9: unsupported construct: 'yield' inside a converted loop [INVALID_ARGUMENT] (error -32000)\n",
  );
});

test('a malformed converted-code result is reported, not shown as code', async () => {
  const r = recorder(() => ({ text: 'x\n', sourceMap: [{ convertedLine: 0, original: { line: 1 } }] }));
  const view = await convertedView(r.send, 'file:///w/a.py', 'autograph', 'a.py');
  assert.equal(view.ok, false);
  assert.match(view.text, /^# stagd could not convert a\.py:\n# stagd\/convertedCode: result\.sourceMap\[0\]\.convertedLine/);
});

test('graph with dot present: asks for DOT and shows the SVG dot draws', async () => {
  const dot = fakeDot('dot-ok', 'printf "<?xml version=\\"1.0\\"?>\\n<svg>"; cat; printf "</svg>"');
  const r = recorder(() => ({ format: 'dot', text: 'digraph f { a -> b }' }));
  const content = await graphContent(r.send, 'file:///w/a.py', 'autograph', dot, 'f');
  assert.deepEqual(r.calls, [
    ['stagd/graph', { textDocument: { uri: 'file:///w/a.py' }, style: 'autograph', format: 'dot', function: 'f' }],
  ]);
  assert.deepEqual(content, { kind: 'svg', svg: '<?xml version="1.0"?>\n<svg>digraph f { a -> b }</svg>' });
});

test('graph without dot: asks for text and says why there is no picture', async () => {
  const r = recorder(() => ({ text: 'f(x) = mul(x, 2)' }));
  const content = await graphContent(r.send, 'file:///w/a.py', 'snek', undefined, 'f');
  assert.deepEqual(r.calls[0]?.[1], {
    textDocument: { uri: 'file:///w/a.py' },
    style: 'snek',
    format: 'text',
    function: 'f',
  });
  assert.deepEqual(content, {
    kind: 'text',
    text: 'f(x) = mul(x, 2)',
    note: 'Graphviz (dot) was not found on the PATH: showing the text dump.',
  });
});

test('graph when dot fails: the DOT text with dot\'s message', async () => {
  const dot = fakeDot('dot-bad', 'echo "Error: syntax error in line 1 near \'{\'" >&2; exit 1');
  const r = recorder(() => ({ format: 'dot', text: 'digraph {' }));
  const content = await graphContent(r.send, 'file:///w/a.py', 'autograph', dot, 'f');
  assert.deepEqual(content, {
    kind: 'text',
    text: 'digraph {',
    note: "dot failed: Error: syntax error in line 1 near '{'; showing the DOT text.",
  });
});

test('graph when the server answers text although DOT was asked: the text, no note', async () => {
  const dot = fakeDot('dot-unused', 'exit 3');
  const r = recorder(() => ({ format: 'text', text: 'g = ...' }));
  assert.deepEqual(await graphContent(r.send, 'u', 'autograph', dot, 'f'), { kind: 'text', text: 'g = ...' });
});

test('graph when the server refuses: its error in the view', async () => {
  const r = recorder(() => {
    throw rpcError(-32601, "Method not found: 'stagd/graph'");
  });
  assert.deepEqual(await graphContent(r.send, 'u', 'autograph', undefined, 'f'), {
    kind: 'text',
    text: "Method not found: 'stagd/graph' (error -32601)",
    note: 'stagd could not stage this function.',
  });
});

test('errorText handles plain errors and non-errors', () => {
  assert.equal(errorText(new Error('boom')), 'boom');
  assert.equal(errorText('just a string'), 'just a string');
  assert.equal(errorText(rpcError(-32000, 'm', { status: 'UNIMPLEMENTED' })), 'm [UNIMPLEMENTED] (error -32000)');
  assert.equal(errorText(rpcError(-32000, 'm', { line: '7' })), '<source>:7:1: m (error -32000)');
});

test('graph of one function (from a code lens) names it in the request', async () => {
  const r = recorder(() => ({ format: 'text', text: 'g' }));
  await graphContent(r.send, 'file:///w/a.py', 'autograph', undefined, 'train_step');
  assert.deepEqual(r.calls[0]?.[1], {
    textDocument: { uri: 'file:///w/a.py' },
    style: 'autograph',
    format: 'text',
    function: 'train_step',
  });
});

test('graph from the palette asks for the function under the cursor by position', async () => {
  const r = recorder(() => ({ format: 'text', text: 'g', function: 'step' }));
  await graphContent(r.send, 'file:///w/a.py', 'snek', undefined, { line: 12, character: 4 });
  assert.deepEqual(r.calls[0]?.[1], {
    textDocument: { uri: 'file:///w/a.py' },
    style: 'snek',
    format: 'text',
    position: { line: 12, character: 4 },
  });
});

test('a located staging error shows FILE:LINE:COL from error.data', async () => {
  const r = recorder(() => {
    throw rpcError(-32803, 'staging f failed: TypeError: no', { file: '/w/a.py', line: 7, column: 5 });
  });
  const content = await graphContent(r.send, 'u', 'autograph', undefined, 'f');
  assert.deepEqual(content, {
    kind: 'text',
    text: '/w/a.py:7:5: staging f failed: TypeError: no (error -32803)',
    note: 'stagd could not stage this function.',
  });
});

test('a staging helper that cannot import stagd or does not start: the note names the setting to change', async () => {
  const noModule = rpcError(
    -32803,
    "stagd/graph: the staging helper 'python3 -m stagd.runtime.lsp_stage' exited with status 1 without an answer: " +
      "ModuleNotFoundError: No module named 'stagd' (... initializationOptions.pythonEnv ...)",
  );
  const r = recorder(() => {
    throw noModule;
  });
  const content = await graphContent(r.send, 'u', 'autograph', undefined, 'f');
  assert.equal(content.kind, 'text');
  assert.match(content.note ?? '', /^stagd could not stage this function\. .*set stagd\.pythonEnv to \{"PYTHONPATH": "<your stagd checkout>\/clients\/python"\}, or stagd\.python/);
  assert.match(settingHint(rpcError(-32803, "stagd/graph: cannot start '/no/python': no such file")), /set stagd\.python to a Python 3 interpreter/);
  assert.equal(settingHint(rpcError(-32803, 'staging f failed: TypeError: no')), '');
  assert.equal(settingHint('not an error'), '');
});
