// SPDX-License-Identifier: Apache-2.0
/*
 * dot.ts — finding Graphviz's `dot` on the PATH and rendering DOT text to SVG
 * with it. The graph view shows SVG when `dot` is found, plain text otherwise.
 *
 * No VS Code import: the unit tests run it against stand-in executables.
 */

import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';

export type IsExecutable = (file: string) => boolean;

/** Whether `file` is a regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first `name` on `searchPath` (a PATH value) that is executable, or
 * undefined. On Windows the PATHEXT suffixes are tried too. A name with a
 * directory part is checked as it is.
 */
export function findExecutable(
  name: string,
  searchPath: string | undefined,
  options: { platform?: NodeJS.Platform; pathExt?: string; isExecutable?: IsExecutable } = {},
): string | undefined {
  const platform = options.platform ?? process.platform;
  const isExecutable = options.isExecutable ?? isExecutableFile;
  const p = platform === 'win32' ? path.win32 : path.posix;
  const suffixes =
    platform === 'win32' ? ['', ...(options.pathExt ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((s) => s !== '')] : [''];
  const candidates = (dir: string): string[] => suffixes.map((s) => p.join(dir, name + s));
  if (name.includes('/') || (platform === 'win32' && name.includes('\\'))) {
    return suffixes.map((s) => name + s).find(isExecutable);
  }
  const dirs = (searchPath ?? '').split(platform === 'win32' ? ';' : ':').filter((d) => d !== '');
  for (const dir of dirs) {
    const found = candidates(dir).find(isExecutable);
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

/** `dot` from the PATH of this process, if Graphviz is installed. */
export function findDot(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findExecutable('dot', env['PATH'] ?? env['Path']);
}

/**
 * Runs `dot -Tsvg` on `dotText` and resolves with the SVG. Rejects with dot's
 * own message when it fails (a syntax error in the DOT text) and after
 * `timeoutMs` (a huge graph), killing it.
 */
export function renderSvg(dotPath: string, dotText: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(dotPath, ['-Tsvg'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let settled = false;
    const finish = (f: () => void): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        f();
      }
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(() => reject(new Error(`dot did not finish within ${timeoutMs} ms`)));
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => finish(() => reject(new Error(`cannot run ${dotPath}: ${e.message}`))));
    child.on('close', (code, signal) => {
      finish(() => {
        if (code === 0) {
          resolve(Buffer.concat(out).toString('utf8'));
        } else {
          const why = Buffer.concat(err).toString('utf8').trim() || (signal ? `killed by ${signal}` : `exit status ${code}`);
          reject(new Error(`dot failed: ${why}`));
        }
      });
    });
    // dot may exit before reading everything (bad input): ignore EPIPE, 'close' reports.
    child.stdin.on('error', () => undefined);
    child.stdin.end(dotText, 'utf8');
  });
}
