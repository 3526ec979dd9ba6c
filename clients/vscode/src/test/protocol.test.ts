// SPDX-License-Identifier: Apache-2.0
/*
 * protocol.test.ts — checks of the stagd/convertedCode and stagd/graph results.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { parseConvertedCode, parseGraph, ProtocolError } from '../protocol';

test('a converted-code result gives the text and a 0-based map', () => {
  const r = parseConvertedCode({
    text: 'def f(x):\n    return x\n',
    sourceMap: [{ convertedLine: 2, original: { line: 2, column: 5 } }],
  });
  assert.equal(r.text, 'def f(x):\n    return x\n');
  assert.deepEqual(r.sourceMap.byConverted, [{ convertedLine: 1, originalLine: 1, originalColumn: 4 }]);
});

test('proto3 JSON leaves empty fields out: {} is empty text and an empty map', () => {
  const r = parseConvertedCode({});
  assert.equal(r.text, '');
  assert.equal(r.sourceMap.byConverted.length, 0);
});

test('bad converted-code results name the method and the field', () => {
  assert.throws(() => parseConvertedCode(null), /stagd\/convertedCode: the result must be an object/);
  assert.throws(() => parseConvertedCode({ text: 3 }), /stagd\/convertedCode: result.text must be a string/);
  assert.throws(
    () => parseConvertedCode({ text: '', sourceMap: [{ convertedLine: 'x' }] }),
    (e: unknown) => e instanceof ProtocolError && /result\.sourceMap\[0\]\.convertedLine/.test(e.message),
  );
});

test('graph results: the format defaults to the one asked for and must be dot or text', () => {
  assert.deepEqual(parseGraph({ text: 'digraph {}' }, 'dot'), { format: 'dot', text: 'digraph {}' });
  assert.deepEqual(parseGraph({ format: 'text', text: 'g = ...' }, 'dot'), { format: 'text', text: 'g = ...' });
  assert.throws(() => parseGraph({ format: 'json', text: '{}' }, 'dot'), /stagd\/graph: result.format must be "dot" or "text", got "json"/);
  assert.throws(() => parseGraph([], 'text'), /stagd\/graph: the result must be an object/);
});
