// SPDX-License-Identifier: Apache-2.0
/*
 * manifest.test.ts — package.json agrees with the code: the contributed
 * commands are the ones registered, the settings are the ones read, with the
 * same defaults and style choices, and the extension activates on Python.
 */

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../commands';
import { DEFAULT_SETTINGS, STYLES } from '../settings';

interface Manifest {
  main: string;
  publisher: string;
  license: string;
  repository?: { type: string; url: string };
  scripts: Record<string, string>;
  activationEvents: string[];
  engines: { vscode: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  contributes: {
    commands: Array<{ command: string; title: string; category?: string }>;
    configuration: { properties: Record<string, { type: string; default: unknown; enum?: string[] }> };
  };
}

// out/test/manifest.test.js → the package root is two folders up.
const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as Manifest;

test('contributed commands are exactly the registered ones, titled "stagd: …"', () => {
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(contributed, Object.values(COMMANDS).sort());
  const titles = manifest.contributes.commands.map((c) => `${c.category}: ${c.title}`).sort();
  assert.deepEqual(titles, ['stagd: Show converted code', 'stagd: Show graph']);
});

test('settings stagd.path, stagd.address, stagd.style, stagd.python, stagd.pythonEnv, token and TLS with the defaults the code uses', () => {
  const props = manifest.contributes.configuration.properties;
  assert.deepEqual(Object.keys(props).sort(), [
    'stagd.address',
    'stagd.path',
    'stagd.python',
    'stagd.pythonEnv',
    'stagd.style',
    'stagd.tlsCa',
    'stagd.tlsCert',
    'stagd.tlsKey',
    'stagd.token',
  ]);
  for (const k of ['token', 'tlsCa', 'tlsCert', 'tlsKey'] as const) {
    assert.equal(props[`stagd.${k}`]?.default, DEFAULT_SETTINGS[k]);
  }
  assert.deepEqual(props['stagd.pythonEnv']?.default, DEFAULT_SETTINGS.pythonEnv);
  assert.equal(props['stagd.python']?.default, DEFAULT_SETTINGS.python);
  assert.equal(props['stagd.path']?.default, DEFAULT_SETTINGS.path);
  assert.equal(props['stagd.address']?.default, DEFAULT_SETTINGS.address);
  assert.equal(props['stagd.style']?.default, DEFAULT_SETTINGS.style);
  assert.deepEqual(props['stagd.style']?.enum, [...STYLES]);
});

test('activates on Python files; main is the esbuild bundle, made before packaging', () => {
  assert.deepEqual(manifest.activationEvents, ['onLanguage:python']);
  assert.equal(manifest.main, './dist/extension.js');
  assert.match(manifest.scripts['bundle'] ?? '', /^esbuild src\/extension\.ts --bundle .*--external:vscode .*--outfile=dist\/extension\.js/);
  assert.match(manifest.scripts['vscode:prepublish'] ?? '', /npm run bundle/);
  assert.ok(manifest.devDependencies['esbuild'], 'esbuild is a devDependency');
});

test('the manifest has what vsce asks for: a repository, a license file, a publisher', () => {
  assert.equal(manifest.repository?.type, 'git');
  assert.match(manifest.repository?.url ?? '', /^https:\/\//);
  assert.ok(manifest.publisher);
  assert.ok(manifest.license);
});

test('@types/vscode is not newer than the engine (vsce refuses that)', () => {
  const engine = /(\d+)\.(\d+)/.exec(manifest.engines.vscode);
  const types = /(\d+)\.(\d+)/.exec(manifest.devDependencies['@types/vscode'] ?? '');
  assert.ok(engine !== null && types !== null);
  assert.ok(Number(types[1]) * 1000 + Number(types[2]) <= Number(engine[1]) * 1000 + Number(engine[2]));
});
