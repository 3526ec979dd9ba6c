// SPDX-License-Identifier: Apache-2.0
/*
 * rawFrames.ts — a byte-level LSP peer for the malformed-input tests: writes
 * whatever bytes a test gives (broken headers, bodies that are not JSON) to
 * the daemon's stdin and parses the `Content-Length` framed replies itself,
 * so nothing in a client library can tidy the input or hide a bad reply.
 */

import { Daemon } from './daemon';

export type Message = Record<string, unknown> & { id?: unknown; result?: unknown; error?: RpcError };

export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** One framed message as bytes. */
export function frame(body: string | object): Buffer {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, 'ascii'), bytes]);
}

export class RawPeer {
  readonly daemon: Daemon;
  private buffer = Buffer.alloc(0);
  private readonly queue: Message[] = [];
  private waiter: (() => void) | undefined;
  private protocolError: Error | undefined;

  constructor(extraArgs: readonly string[] = []) {
    this.daemon = new Daemon(['--lsp', '--stdio', ...extraArgs]);
    this.daemon.proc.stdout.on('data', (b: Buffer) => this.receive(b));
  }

  write(bytes: Buffer | string): void {
    this.daemon.proc.stdin.write(bytes);
  }

  send(message: object): void {
    this.write(frame(message));
  }

  /** The next message from the daemon; fails after `ms`. */
  async next(ms = 5000): Promise<Message> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.protocolError !== undefined) {
        throw this.protocolError;
      }
      const m = this.queue.shift();
      if (m !== undefined) {
        return m;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`no message from stagd within ${ms} ms; stderr:\n${this.daemon.stderr}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** Sends a request and returns the reply with the same id (other messages are kept in order). */
  async request(id: number, method: string, params?: unknown): Promise<Message> {
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.next();
  }

  async initialize(): Promise<void> {
    const reply = await this.request(0, 'initialize', { processId: null, rootUri: null, capabilities: {} });
    if (reply.error !== undefined) {
      throw new Error(`initialize failed: ${JSON.stringify(reply.error)}`);
    }
    this.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
  }

  dispose(): void {
    this.daemon.kill();
  }

  /** Parses as many complete frames as the buffer holds; a bad frame from the daemon is a test failure. */
  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) {
        break;
      }
      const header = this.buffer.subarray(0, end).toString('ascii');
      const m = /^Content-Length: (\d+)$/im.exec(header);
      if (m === null) {
        this.protocolError = new Error(`stagd sent a header without Content-Length: ${JSON.stringify(header)}`);
        break;
      }
      const length = Number(m[1]);
      if (this.buffer.length < end + 4 + length) {
        break;
      }
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      try {
        this.queue.push(JSON.parse(body) as Message);
      } catch {
        this.protocolError = new Error(`stagd sent a body that is not JSON: ${JSON.stringify(body)}`);
      }
    }
    this.waiter?.();
  }
}
