// SPDX-License-Identifier: Apache-2.0
/*
 * serverOptions.ts — the language client's server options for a launch: the
 * executable to start (stdio) or a function that opens the TCP connection.
 *
 * The shapes are those vscode-languageclient's `ServerOptions` accepts
 * (`Executable` and `() => Promise<StreamInfo>`), built without importing it,
 * so the unit tests run under plain Node.
 */

import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { ServerLaunch, TlsFiles } from './settings';

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
  const files = launch.tls;
  if (files !== undefined) {
    return () => connectTls(launch.host, launch.port, files, connectTimeoutMs);
  }
  return () => connectTcp(launch.host, launch.port, connectTimeoutMs);
}


/** Connects to a daemon's `--lsp-listen` address; rejects with a message naming it. */
export function connectTcp(host: string, port: number, timeoutMs = 10_000): Promise<SocketStreams> {
  return settle(net.connect({ host, port }), 'connect', `${host}:${port}`, timeoutMs);
}

/** Connects over TLS (a daemon with --tls-cert), verifying its certificate against
 * files.ca; presents files.cert/key when set (--tls-client-ca). */
export function connectTls(host: string, port: number, files: TlsFiles, timeoutMs = 10_000): Promise<SocketStreams> {
  let options: tls.ConnectionOptions;
  try {
    const read = (p: string): Buffer | undefined => (p === '' ? undefined : fs.readFileSync(p));
    options = { host, port, ca: read(files.ca), cert: read(files.cert), key: read(files.key) };
    if (net.isIP(host) === 0) {
      options.servername = host;
    }
  } catch (e) {
    return Promise.reject(new Error(`stagd TLS settings: ${(e as Error).message}`));
  }
  return settle(tls.connect(options), 'secureConnect', `${host}:${port} over TLS`, timeoutMs);
}

/** Resolves once `socket` emits `ready`; rejects on an error or after timeoutMs. */
function settle(socket: net.Socket, ready: string, where: string, timeoutMs: number): Promise<SocketStreams> {
  return new Promise((resolve, reject) => {
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`cannot connect to stagd at ${where}: no answer within ${timeoutMs} ms`));
    });
    socket.once(ready, () => {
      socket.setTimeout(0);
      resolve({ reader: socket, writer: socket });
    });
    socket.once('error', (e) => reject(new Error(`cannot connect to stagd at ${where}: ${e.message}`)));
  });
}
