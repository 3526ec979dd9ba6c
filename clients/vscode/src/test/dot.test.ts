// SPDX-License-Identifier: Apache-2.0
/*
 * dot.test.ts — finding `dot` on a PATH and running it, against stand-in
 * executables written to a temporary folder (so the test needs no Graphviz).
 */

import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { findDot, findExecutable, isExecutableFile, renderSvg } from '../dot';

const root = mkdtempSync(path.join(tmpdir(), 'stagd-dot-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

function script(dir: string, name: string, body: string, mode = 0o755): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, mode);
  return file;
}

test('the first executable dot on the PATH wins; non-executables and folders are passed over', () => {
  const a = path.join(root, 'a');
  const b = path.join(root, 'b');
  const c = path.join(root, 'c');
  script(a, 'dot', 'exit 0', 0o644); // not executable
  mkdirSync(path.join(b, 'dot'), { recursive: true }); // a folder named dot
  const real = script(c, 'dot', 'exit 0');
  assert.equal(findExecutable('dot', [path.join(root, 'missing'), a, b, c].join(':')), real);
  assert.equal(findDot({ PATH: `${a}:${c}` }), real);
  assert.equal(isExecutableFile(path.join(a, 'dot')), false);
});

test('no dot on the PATH (or no PATH) is undefined', () => {
  assert.equal(findDot({ PATH: path.join(root, 'empty') }), undefined);
  assert.equal(findDot({}), undefined);
  assert.equal(findExecutable('dot', '::'), undefined);
});

test('Windows: PATHEXT suffixes and ; separators are used', () => {
  const seen: string[] = [];
  const found = findExecutable('dot', 'C:\\Tools;C:\\Graphviz\\bin', {
    platform: 'win32',
    pathExt: '.COM;.EXE',
    isExecutable: (f) => {
      seen.push(f);
      return f === 'C:\\Graphviz\\bin\\dot.EXE';
    },
  });
  assert.equal(found, 'C:\\Graphviz\\bin\\dot.EXE');
  assert.deepEqual(seen.slice(0, 3), ['C:\\Tools\\dot', 'C:\\Tools\\dot.COM', 'C:\\Tools\\dot.EXE']);
});

test('a name with a folder is checked as it is', () => {
  const own = script(path.join(root, 'own'), 'mydot', 'exit 0');
  assert.equal(findExecutable(own, ''), own);
  assert.equal(findExecutable(path.join(root, 'own', 'nope'), '/usr/bin'), undefined);
});

test('renderSvg pipes the DOT text through `dot -Tsvg` and returns its output', async () => {
  // A stand-in dot: checks its argument and wraps stdin in an <svg> element.
  const fake = script(path.join(root, 'fake'), 'dot', '[ "$1" = "-Tsvg" ] || exit 9\nprintf "<svg>"; cat; printf "</svg>"');
  const big = `digraph g { ${'n -> m; '.repeat(20000)} }`; // larger than a pipe buffer
  assert.equal(await renderSvg(fake, big), `<svg>${big}</svg>`);
});

test('renderSvg reports dot\'s own error message', async () => {
  const failing = script(path.join(root, 'failing'), 'dot', 'echo "Error: <stdin>: syntax error in line 1" >&2; exit 1');
  await assert.rejects(renderSvg(failing, 'digraph {'), /dot failed: Error: <stdin>: syntax error in line 1/);
});

test('renderSvg kills a dot that takes too long', async () => {
  const slow = script(path.join(root, 'slow'), 'dot', 'exec sleep 30');
  const started = Date.now();
  await assert.rejects(renderSvg(slow, 'digraph {}', 200), /did not finish within 200 ms/);
  assert.ok(Date.now() - started < 5000);
});

test('renderSvg rejects when dot cannot be run', async () => {
  await assert.rejects(renderSvg(path.join(root, 'nowhere', 'dot'), 'digraph {}'), /cannot run .*ENOENT/);
});
