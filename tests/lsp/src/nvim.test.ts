// SPDX-License-Identifier: Apache-2.0
/*
 * nvim.test.ts — the same session driven by Neovim's built-in LSP client,
 * headless (nvim/stagd_version.lua: lifecycle and a request; nvim/stagd_features.lua:
 * diagnostics, symbols, code lenses, hover, stagd/convertedCode and an incremental
 * edit; nvim/stagd_lens.lua: the configuration of docs/editors.md, taken from the doc,
 * running the lens commands through workspace/executeCommand). Neovim must be
 * installed (Debian: `apt-get install -y neovim`); a missing nvim fails the test.
 */

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { stagdBin } from './daemon';

const script = path.resolve(__dirname, '..', 'nvim', 'stagd_version.lua');
const featuresScript = path.resolve(__dirname, '..', 'nvim', 'stagd_features.lua');
const lensScript = path.resolve(__dirname, '..', 'nvim', 'stagd_lens.lua');
// out/nvim.test.js → the repository root is three folders up.
const ROOT = path.resolve(__dirname, '..', '..', '..');
// Neovim writes its LSP log and state under the XDG folders: keep them out of $HOME.
const home = mkdtempSync(path.join(tmpdir(), 'stagd-nvim-test-'));
after(() => rmSync(home, { recursive: true, force: true }));

function runNvim(
  bin: string,
  luaFile = script,
  init = 'NONE',
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const nvim = spawn('nvim', ['--headless', '-u', init, '-i', 'NONE', '-c', `luafile ${luaFile}`], {
      env: {
        ...process.env,
        ...env,
        STAGD_BIN: bin,
        XDG_CACHE_HOME: path.join(home, 'cache'),
        XDG_STATE_HOME: path.join(home, 'state'),
        XDG_DATA_HOME: path.join(home, 'data'),
        XDG_CONFIG_HOME: path.join(home, 'config'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    nvim.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    nvim.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => nvim.kill('SIGKILL'), 30_000);
    nvim.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run nvim (install Debian's neovim package): ${e.message}`));
    });
    nvim.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('Neovim: initialize, stagd/version, an unknown method, shutdown/exit', async () => {
  const r = await runNvim(stagdBin());
  const lines = r.stdout.trim().split('\n');
  assert.equal(r.code, 0, `nvim exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  assert.match(lines[0] ?? '', /^initialized stagd \d+\.\d+\.\d+/);
  assert.match(lines[1] ?? '', /^stagd\/version \{/);
  const version = JSON.parse((lines[1] ?? '').slice('stagd/version '.length)) as { api?: string; version?: string };
  assert.equal(version.api, 'stagd.v1');
  assert.equal(`initialized stagd ${version.version}`, lines[0]);
  assert.deepEqual(lines.slice(2), ['stagd/noSuchMethod error -32601', 'exit 0 signal 0', 'OK']);
});

test('Neovim script: a daemon that cannot start is a failure, not a hang', async () => {
  const r = await runNvim(path.join(home, 'no-such-stagd'));
  assert.equal(r.code, 1, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  assert.match(r.stdout, /^FAIL STAGD_BIN=.*no-such-stagd is not executable$/m);
});

test('Neovim: diagnostics, symbols, code lenses, hover, stagd/convertedCode, an incremental edit', async () => {
  const r = await runNvim(stagdBin(), featuresScript);
  assert.equal(r.code, 0, `nvim exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  assert.deepEqual(r.stdout.trim().split('\n'), [
    'diagnostics 1 unsupported-construct line 12',
    'symbols f Model(step) gen',
    'lenses f:stagd.showConvertedCode f:stagd.showGraph Model.step:stagd.showConvertedCode Model.step:stagd.showGraph ' +
      'gen:stagd.showConvertedCode gen:stagd.showGraph',
    'hover **Staged** when `x` is a staged tensor, plain Python otherwise: the condition depends on parameter `x`.',
    'convertedCode header map yes',
    'after edit 1 syntax line 5',
    'exit 0',
    'OK',
  ]);
});

test('Neovim with the configuration of docs/editors.md: lens commands through workspace/executeCommand', async () => {
  const doc = readFileSync(path.join(ROOT, 'docs', 'editors.md'), 'utf8');
  const m = /<!-- nvim-config:begin -->\n```lua\n([\s\S]*?)```\n<!-- nvim-config:end -->/.exec(doc);
  assert.ok(m !== null, 'docs/editors.md has no nvim-config block');
  const dir = path.join(home, 'doc-config');
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  writeFileSync(path.join(dir, 'init.lua'), m[1] as string);
  // the configuration runs `stagd` from PATH, as an installed daemon would be
  symlinkSync(stagdBin(), path.join(dir, 'bin', 'stagd'));
  const r = await runNvim(stagdBin(), lensScript, path.join(dir, 'init.lua'), {
    PATH: `${path.join(dir, 'bin')}:${process.env['PATH'] ?? ''}`,
    STAGD_PYTHON: process.env['STAGD_TEST_PYTHON'] ?? '/usr/bin/python3',
    PYTHONPATH: path.join(ROOT, 'clients', 'python'),
  });
  assert.equal(r.code, 0, `nvim exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  assert.deepEqual(r.stdout.trim().split('\n'), [
    'client stagd attached true',
    'executeCommandProvider stagd.showConvertedCode stagd.showGraph',
    'StagdConvertedCode python nofile true',
    'StagdGraph text true',
    'lenses 4',
    'codelens.run true',
    'diagnostic staging-error line 5 true',
    'notified true',
    'OK',
  ]);
});
