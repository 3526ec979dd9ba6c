// SPDX-License-Identifier: Apache-2.0
/*
 * sourceMap.test.ts — parsing the wire source map (1-based) and the lookups
 * between converted and original lines (0-based).
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { convertedLineFor, originalLineFor, parseSourceMap, SourceMapError } from '../sourceMap';

// Original (1-based):         Converted (1-based):
// 1 def f(x):                 1 def f(x):                 ← 1
// 2     # doubles when big    2     def if_true():        ← 3
// 3     if x > 0:             3         x = x * 2          ← 4
// 4         x = x * 2         4         return x           (no entry)
// 5     return x              5     x = ag.if_stmt(...)    ← 3
//                             6     return x               ← 5
const wire = [
  { convertedLine: 6, original: { line: 5, column: 5 } },
  { convertedLine: 1, original: { line: 1, column: 1 } },
  { convertedLine: 2, original: { line: 3, column: 5 } },
  { convertedLine: 3, original: { line: 4, column: 9 } },
  { convertedLine: 5, original: { line: 3, column: 5 } },
];

test('wire entries become 0-based and sorted both ways', () => {
  const map = parseSourceMap(wire);
  assert.deepEqual(
    map.byConverted.map((e) => [e.convertedLine, e.originalLine, e.originalColumn]),
    [
      [0, 0, 0],
      [1, 2, 4],
      [2, 3, 8],
      [4, 2, 4],
      [5, 4, 4],
    ],
  );
  assert.deepEqual(
    map.byOriginal.map((e) => [e.originalLine, e.convertedLine]),
    [
      [0, 0],
      [2, 1],
      [2, 4],
      [3, 2],
      [4, 5],
    ],
  );
});

test('converted → original: exact entries, and unmapped lines take the entry above', () => {
  const map = parseSourceMap(wire);
  assert.equal(originalLineFor(map, 0), 0);
  assert.equal(originalLineFor(map, 1), 2);
  assert.equal(originalLineFor(map, 3), 3); // `return x` inside if_true: no entry, belongs to line 4
  assert.equal(originalLineFor(map, 4), 2);
  assert.equal(originalLineFor(map, 5), 4);
  assert.equal(originalLineFor(map, 100), 4);
});

test('original → converted: the first converted line of a statement', () => {
  const map = parseSourceMap(wire);
  assert.equal(convertedLineFor(map, 0), 0);
  assert.equal(convertedLineFor(map, 2), 1); // `if` → converted lines 2 and 5: first wins
  assert.equal(convertedLineFor(map, 3), 2);
  assert.equal(convertedLineFor(map, 4), 5);
});

test('original → converted: an unmapped comment line goes to the statement above', () => {
  const map = parseSourceMap(wire);
  assert.equal(convertedLineFor(map, 1), 0);
  assert.equal(convertedLineFor(map, 50), 5);
});

test('above the first entry and on an empty map there is no mapping', () => {
  const map = parseSourceMap([{ convertedLine: 3, original: { line: 2 } }]);
  assert.equal(originalLineFor(map, 1), undefined);
  assert.equal(convertedLineFor(map, 0), undefined);
  const empty = parseSourceMap([]);
  assert.equal(originalLineFor(empty, 0), undefined);
  assert.equal(convertedLineFor(empty, 0), undefined);
});

test('a missing column is column 1 (proto3 JSON omits defaults); a missing map is empty', () => {
  const map = parseSourceMap([{ convertedLine: 1, original: { line: 7 } }]);
  assert.equal(map.byConverted[0]?.originalColumn, 0);
  assert.deepEqual(parseSourceMap(undefined), { byConverted: [], byOriginal: [] });
});

test('malformed maps are rejected with the path of the bad field', () => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /sourceMap must be an array/],
    [[3], /sourceMap\[0\] must be an object/],
    [[{ convertedLine: 0, original: { line: 1 } }], /sourceMap\[0\]\.convertedLine must be a whole number >= 1.*got 0/],
    [[{ convertedLine: 1, original: { line: 1 } }, { convertedLine: 2 }], /sourceMap\[1\]\.original must be an object/],
    [[{ convertedLine: 1, original: { line: '4' } }], /sourceMap\[0\]\.original\.line .* got "4"/],
    [[{ convertedLine: 1.5, original: { line: 1 } }], /convertedLine/],
    [[{ convertedLine: 1, original: { line: 1, column: -2 } }], /original\.column/],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => parseSourceMap(input), (e: unknown) => e instanceof SourceMapError && message.test(e.message));
  }
});

test('lookups stay correct on a large map (binary search boundaries)', () => {
  // Every original line n (0..999) maps to converted lines 3n and 3n+1; 3n+2 is unmapped.
  const big = [];
  for (let n = 0; n < 1000; n++) {
    big.push({ convertedLine: 3 * n + 1, original: { line: n + 1 } });
    big.push({ convertedLine: 3 * n + 2, original: { line: n + 1 } });
  }
  const map = parseSourceMap(big);
  for (const n of [0, 1, 499, 998, 999]) {
    assert.equal(convertedLineFor(map, n), 3 * n);
    assert.equal(originalLineFor(map, 3 * n), n);
    assert.equal(originalLineFor(map, 3 * n + 2), n);
  }
});
