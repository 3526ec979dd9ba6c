// SPDX-License-Identifier: Apache-2.0
/*
 * daemon.ts — starting the real stagd binary for the protocol tests and
 * talking to it with vscode-jsonrpc, the JSON-RPC library under VS Code's
 * language client.
 *
 * The binary comes from $STAGD_BIN; a missing or unset one fails every test
 * loudly instead of skipping them.
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { strict as assert } from 'node:assert';
import { accessSync, constants, statSync } from 'node:fs';
import {
  createProtocolConnection,
  InitializeRequest,
  InitializedNotification,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type InitializeResult,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node';

/** Path of the daemon under test. Throws (failing the test) when unusable. */
export function stagdBin(): string {
  const bin = process.env['STAGD_BIN'];
  if (bin === undefined || bin === '') {
    throw new Error('STAGD_BIN is not set: point it at the stagd binary (e.g. build/server/stagd)');
  }
  try {
    if (!statSync(bin).isFile()) {
      throw new Error('not a file');
    }
    accessSync(bin, constants.X_OK);
  } catch (e) {
    throw new Error(`STAGD_BIN=${bin} is not an executable file: ${(e as Error).message}`);
  }
  return bin;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A daemon child process with its stderr collected. */
export class Daemon {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly exited: Promise<Exit>;
  private stderrText = '';

  constructor(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
    this.proc = spawn(stagdBin(), [...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, STAGD_LOG_LEVEL: 'info', ...env },
    });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (s: string) => (this.stderrText += s));
    // Writes after the daemon has gone must not crash the test process.
    this.proc.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Waits for the exit, failing after `ms` (the daemon is then killed). */
  async waitExit(ms = 10_000): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.proc.kill('SIGKILL');
        reject(new Error(`stagd did not exit within ${ms} ms; stderr:\n${this.stderr}`));
      }, ms);
    });
    try {
      const exit = await Promise.race([this.exited, timeout]);
      // 'exit' can come before the last stderr bytes: let the pipe drain.
      await new Promise<void>((r) => (this.proc.stderr.readableEnded ? r() : this.proc.stderr.once('end', () => r())));
      return exit;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the daemon if it still runs (test cleanup). */
  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGKILL');
    }
  }
}

const SANITIZER = /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer|MemorySanitizer|runtime error:|SUMMARY: \w+Sanitizer/;

/** Fails when stderr holds a sanitizer report or a crash. */
export function assertNoCrashReport(stderr: string): void {
  const m = SANITIZER.exec(stderr);
  if (m !== null) {
    throw new Error(`sanitizer report on stderr (${m[0]}):\n${stderr}`);
  }
}

/** `stagd --lsp --stdio` with a vscode-jsonrpc protocol connection on its stdio. */
export class LspSession {
  readonly daemon: Daemon;
  readonly connection: ProtocolConnection;

  constructor(extraArgs: readonly string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.daemon = new Daemon(['--lsp', '--stdio', ...extraArgs], env);
    this.connection = createProtocolConnection(
      new StreamMessageReader(this.daemon.proc.stdout),
      new StreamMessageWriter(this.daemon.proc.stdin),
    );
    // The connection reports a closed stream as an error: expected when the daemon exits.
    this.connection.onError(() => undefined);
    this.connection.onClose(() => undefined);
    this.connection.listen();
  }

  /** initialize + initialized, as every editor does first. */
  async initialize(): Promise<InitializeResult> {
    const result = await this.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      clientInfo: { name: 'stagd-lsp-tests' },
    });
    await this.connection.sendNotification(InitializedNotification.type, {});
    return result;
  }

  /** Ends the test: disposes the connection, kills a daemon still running. */
  dispose(): void {
    this.connection.dispose();
    this.daemon.kill();
  }
}

/** Starts a session, initialized, and runs `body`; always cleans up. */
export async function withSession<T>(
  body: (s: LspSession) => Promise<T>,
  options: { args?: readonly string[]; initialize?: boolean } = {},
): Promise<T> {
  const session = new LspSession(options.args ?? []);
  try {
    if (options.initialize ?? true) {
      await session.initialize();
    }
    return await body(session);
  } finally {
    session.dispose();
  }
}

/** An assert.rejects check: a JSON-RPC error with this code (and a message matching). */
export function isError(code: number, message?: RegExp) {
  return (e: unknown): boolean => {
    assert.ok(e instanceof ResponseError, `expected a JSON-RPC error, got ${String(e)}`);
    assert.equal(e.code, code, `${e.code} ${e.message}`);
    if (message !== undefined) {
      assert.match(e.message, message);
    }
    return true;
  };
}

/** An LSP Diagnostic as stagd publishes it. */
export interface Diag {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  code: string;
  source: string;
  message: string;
  data?: { hint?: string; function?: string };
}
