// SPDX-License-Identifier: Apache-2.0
/*
 * settings.ts — the extension's settings (`stagd.path`, `stagd.address`,
 * `stagd.style`, `stagd.python`) read into a typed value, and how they decide the way the
 * language server is reached: a `stagd --lsp --stdio` child process, or a TCP
 * connection to a daemon started with `--lsp-listen host:port`.
 *
 * Pure: no VS Code import, so the unit tests run under plain Node.
 */

export type Style = 'autograph' | 'snek';

export const STYLES: readonly Style[] = ['autograph', 'snek'];

export interface StagdSettings {
  /** Executable started with `--lsp --stdio` when no address is set. */
  readonly path: string;
  /** `host:port` of a daemon serving LSP over TCP; empty: start a daemon. */
  readonly address: string;
  readonly style: Style;
  /** Python interpreter the daemon stages with (stagd/graph); empty: the daemon's default. */
  readonly python: string;
}

export const DEFAULT_SETTINGS: StagdSettings = { path: 'stagd', address: '', style: 'autograph', python: '' };

/** How the extension reaches the server. */
export type ServerLaunch =
  | { readonly transport: 'stdio'; readonly command: string; readonly args: readonly string[] }
  | { readonly transport: 'tcp'; readonly host: string; readonly port: number };

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/**
 * Reads the settings through `get` (e.g. `workspace.getConfiguration('stagd').get`),
 * falling back to the defaults for values that are missing or of the wrong type.
 * An unknown style is an error: silently converting in another style would show
 * the user code they did not ask for.
 */
export function readSettings(get: (key: string) => unknown): StagdSettings {
  const path = stringOr(get('path'), DEFAULT_SETTINGS.path).trim() || DEFAULT_SETTINGS.path;
  const address = stringOr(get('address'), DEFAULT_SETTINGS.address).trim();
  const rawStyle = stringOr(get('style'), DEFAULT_SETTINGS.style).trim() || DEFAULT_SETTINGS.style;
  if (!isStyle(rawStyle)) {
    throw new SettingsError(`stagd.style must be one of ${STYLES.join(', ')}, got '${rawStyle}'`);
  }
  const python = stringOr(get('python'), DEFAULT_SETTINGS.python).trim();
  return { path, address, style: rawStyle, python };
}

/** The server's initializationOptions (docs/lsp.md) for these settings. */
export function initializationOptions(settings: StagdSettings): Record<string, unknown> {
  return settings.python === '' ? { style: settings.style } : { style: settings.style, python: settings.python };
}

export function isStyle(value: string): value is Style {
  return (STYLES as readonly string[]).includes(value);
}

/** The launch the settings ask for: TCP when an address is set, else stdio. */
export function serverLaunch(settings: StagdSettings): ServerLaunch {
  if (settings.address !== '') {
    const { host, port } = parseAddress(settings.address);
    return { transport: 'tcp', host, port };
  }
  return { transport: 'stdio', command: settings.path, args: ['--lsp', '--stdio'] };
}

/**
 * Parses `host:port`, `[v6-address]:port` or `:port` (meaning 127.0.0.1), the
 * forms `stagd --lsp-listen` accepts. Port 0 is refused: it only makes sense
 * for a listener.
 */
export function parseAddress(address: string): { host: string; port: number } {
  const text = address.trim();
  let host: string;
  let portText: string;
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  if (bracketed) {
    host = bracketed[1] as string;
    portText = bracketed[2] as string;
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) {
      throw new SettingsError(`stagd.address must be host:port, got '${address}' (no port)`);
    }
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) {
      throw new SettingsError(`stagd.address: write an IPv6 host in brackets, as [${host}]:${portText}`);
    }
  }
  if (!/^\d+$/.test(portText)) {
    throw new SettingsError(`stagd.address: the port must be a number, got '${portText}'`);
  }
  const port = Number(portText);
  if (port < 1 || port > 65535) {
    throw new SettingsError(`stagd.address: the port must be from 1 to 65535, got ${port}`);
  }
  return { host: host === '' ? '127.0.0.1' : host, port };
}

/** Whether a configuration change under `stagd.` needs the client restarted. */
export function needsRestart(before: StagdSettings, after: StagdSettings): boolean {
  return before.path !== after.path || before.address !== after.address || before.python !== after.python;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
