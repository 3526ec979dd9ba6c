// SPDX-License-Identifier: Apache-2.0
/*
 * serverOptions.ts — the language client's server options for a launch: the
 * executable to start (stdio) or a function that opens the TCP connection.
 *
 * The shapes are those vscode-languageclient's `ServerOptions` accepts
 * (`Executable` and `() => Promise<StreamInfo>`), built without importing it,
 * so the unit tests run under plain Node.
 */

import * as net from 'node:net';
import type { ServerLaunch } from './settings';

export interface ExecutableOptions {
  readonly command: string;
  readonly args: string[];
}

export interface SocketStreams {
  readonly reader: net.Socket;
  readonly writer: net.Socket;
}

export type ServerOptionsShape = ExecutableOptions | (() => Promise<SocketStreams>);

export function serverOptionsFor(launch: ServerLaunch, connectTimeoutMs = 10_000): ServerOptionsShape {
  if (launch.transport === 'stdio') {
    // No `transport` field: vscode-languageclient then speaks over the child's
    // stdio without appending its own `--stdio` (the args already have it).
    return { command: launch.command, args: [...launch.args] };
  }
  return () => connectTcp(launch.host, launch.port, connectTimeoutMs);
}

/** Connects to a daemon's `--lsp-listen` address; rejects with a message naming it. */
export function connectTcp(host: string, port: number, timeoutMs = 10_000): Promise<SocketStreams> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`cannot connect to stagd at ${host}:${port}: no answer within ${timeoutMs} ms`));
    });
    socket.once('connect', () => {
      socket.setTimeout(0);
      resolve({ reader: socket, writer: socket });
    });
    socket.once('error', (e) => reject(new Error(`cannot connect to stagd at ${host}:${port}: ${e.message}`)));
  });
}
