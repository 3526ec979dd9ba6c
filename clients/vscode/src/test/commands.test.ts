// SPDX-License-Identifier: Apache-2.0
/*
 * commands.test.ts — the argument a code lens passes to the stagd commands.
 */

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { parseCommandTarget } from '../commands';

test('no argument (command palette) is no target: the active editor is used', () => {
  assert.equal(parseCommandTarget(undefined), undefined);
  assert.equal(parseCommandTarget(null), undefined);
});

test('{uri} and {uri, function} from a code lens', () => {
  assert.deepEqual(parseCommandTarget({ uri: 'file:///w/a.py' }), { uri: 'file:///w/a.py' });
  assert.deepEqual(parseCommandTarget({ uri: 'file:///w/a.py', function: 'f' }), { uri: 'file:///w/a.py', function: 'f' });
  assert.deepEqual(parseCommandTarget({ uri: 'file:///w/a.py', function: '' }), { uri: 'file:///w/a.py' });
});

test('wrong shapes are errors that say what was expected', () => {
  assert.throws(() => parseCommandTarget('file:///w/a.py'), /must be \{uri, function\?\}, got "file:\/\/\/w\/a\.py"/);
  assert.throws(() => parseCommandTarget([{ uri: 'x' }]), /must be \{uri, function\?\}/);
  assert.throws(() => parseCommandTarget({ function: 'f' }), /needs a uri string/);
  assert.throws(() => parseCommandTarget({ uri: 'x', function: 3 }), /function must be a string/);
});
