// SPDX-License-Identifier: Apache-2.0
/*
 * emacs.test.ts — the eglot configuration of docs/editors.md in a real Emacs (Debian's
 * emacs-nox with elpa-eglot), batch mode: the configuration is taken from the doc,
 * the daemon is on PATH as `stagd`, and emacs/stagd_eglot.el drives it (eglot started,
 * the lens commands through workspace/executeCommand, a staging error as an error and
 * a Flymake diagnostic). A missing emacs fails the test.
 */

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { stagdBin } from './daemon';

// out/emacs.test.js → the repository root is three folders up.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const script = path.resolve(__dirname, '..', 'emacs', 'stagd_eglot.el');
const home = mkdtempSync(path.join(tmpdir(), 'stagd-emacs-test-'));
after(() => rmSync(home, { recursive: true, force: true }));

test('Emacs (eglot) with the configuration of docs/editors.md: lens commands, a staging error in Flymake', async () => {
  const doc = readFileSync(path.join(ROOT, 'docs', 'editors.md'), 'utf8');
  const m = /<!-- emacs-config:begin -->\n```elisp\n([\s\S]*?)```\n<!-- emacs-config:end -->/.exec(doc);
  assert.ok(m !== null, 'docs/editors.md has no emacs-config block');
  writeFileSync(path.join(home, 'init.el'), m[1] as string);
  mkdirSync(path.join(home, 'bin'));
  symlinkSync(stagdBin(), path.join(home, 'bin', 'stagd'));
  // eglot needs a project: a git repository
  const project = path.join(home, 'project');
  mkdirSync(path.join(project, '.git'), { recursive: true });
  writeFileSync(path.join(project, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  mkdirSync(path.join(project, '.git', 'objects'));
  mkdirSync(path.join(project, '.git', 'refs'));
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const emacs = spawn('emacs', ['--batch', '-l', path.join(home, 'init.el'), '-l', script], {
      cwd: project,
      env: {
        ...process.env,
        HOME: home,
        PATH: `${path.join(home, 'bin')}:${process.env['PATH'] ?? ''}`,
        STAGD_TEST_DIR: project,
        STAGD_PYTHON: process.env['STAGD_TEST_PYTHON'] ?? '/usr/bin/python3',
        PYTHONPATH: path.join(ROOT, 'clients', 'python'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    emacs.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    emacs.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => emacs.kill('SIGKILL'), 60_000);
    emacs.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run emacs (install Debian's emacs-nox and elpa-eglot): ${e.message}`));
    });
    emacs.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  assert.equal(r.code, 0, `emacs exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  assert.deepEqual(r.stdout.trim().split('\n'), [
    'mode python-mode',
    'server t',
    'converted python-mode t',
    'graph t',
    'error t',
    'flymake t line 6',
    'OK',
  ]);
});
