// SPDX-License-Identifier: Apache-2.0
/*
 * scrollSync.test.ts — scroll mapping between a source and its converted view,
 * and the suppression of the echo that a programmatic reveal causes.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ScrollSync, scrollTarget } from '../scrollSync';
import { parseSourceMap } from '../sourceMap';

// original 1 → converted 1..2, original 3 → converted 4..9, original 10 → converted 12
const map = parseSourceMap([
  { convertedLine: 1, original: { line: 1 } },
  { convertedLine: 2, original: { line: 1 } },
  { convertedLine: 4, original: { line: 3 } },
  { convertedLine: 9, original: { line: 3 } },
  { convertedLine: 12, original: { line: 10 } },
]);

test('scrollTarget maps source tops to converted tops and back (0-based)', () => {
  assert.deepEqual(scrollTarget(map, 'source', 0), { side: 'converted', line: 0 });
  assert.deepEqual(scrollTarget(map, 'source', 2), { side: 'converted', line: 3 });
  assert.deepEqual(scrollTarget(map, 'source', 5), { side: 'converted', line: 3 });
  assert.deepEqual(scrollTarget(map, 'source', 9), { side: 'converted', line: 11 });
  assert.deepEqual(scrollTarget(map, 'converted', 6), { side: 'source', line: 2 });
  assert.deepEqual(scrollTarget(map, 'converted', 11), { side: 'source', line: 9 });
});

test('with no mapping above the top line, the other side goes to its top', () => {
  const late = parseSourceMap([{ convertedLine: 5, original: { line: 5 } }]);
  assert.deepEqual(scrollTarget(late, 'source', 1), { side: 'converted', line: 0 });
  assert.deepEqual(scrollTarget(late, 'converted', 2), { side: 'source', line: 0 });
  const empty = parseSourceMap([]);
  assert.deepEqual(scrollTarget(empty, 'source', 40), { side: 'converted', line: 0 });
});

test('the echo of a reveal is ignored during the quiet period, then scrolling syncs again', () => {
  let clock = 1000;
  const sync = new ScrollSync(map, () => clock, 150);
  assert.deepEqual(sync.onScroll('source', 2), { side: 'converted', line: 3 });
  clock += 10;
  // The converted editor reports the scroll we caused: no reveal back to the source.
  assert.equal(sync.onScroll('converted', 3), undefined);
  clock += 200;
  // The user now scrolls the converted view: the source follows.
  assert.deepEqual(sync.onScroll('converted', 11), { side: 'source', line: 9 });
});

test('a scroll that maps to the line already shown reveals nothing', () => {
  let clock = 0;
  const sync = new ScrollSync(map, () => clock, 150);
  assert.deepEqual(sync.onScroll('source', 3), { side: 'converted', line: 3 });
  clock += 500;
  assert.equal(sync.onScroll('source', 4), undefined); // lines 4..8 of the source all map to converted 3
  assert.deepEqual(sync.onScroll('source', 9), { side: 'converted', line: 11 });
});

test('a new map resets what was revealed', () => {
  let clock = 0;
  const sync = new ScrollSync(map, () => clock, 150);
  assert.deepEqual(sync.onScroll('source', 2), { side: 'converted', line: 3 });
  clock += 500;
  sync.setMap(parseSourceMap([{ convertedLine: 1, original: { line: 1 } }, { convertedLine: 20, original: { line: 3 } }]));
  assert.deepEqual(sync.onScroll('source', 2), { side: 'converted', line: 19 });
});
