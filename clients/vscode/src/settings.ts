// SPDX-License-Identifier: Apache-2.0
/*
 * settings.ts — the extension's settings (`stagd.path`, `stagd.address`,
 * `stagd.style`, `stagd.python`, `stagd.pythonEnv`, and for a daemon on the network
 * `stagd.token`, `stagd.tlsCa`, `stagd.tlsCert`, `stagd.tlsKey`) read into a typed value, how they
 * decide the way the language server is reached (a `stagd --lsp --stdio` child
 * process, or a TCP connection to a daemon started with `--lsp-listen host:port`), and
 * the server's initializationOptions.
 *
 * Pure: no VS Code import, so the unit tests run under plain Node.
 */

export type Style = 'autograph' | 'snek';

export const STYLES: readonly Style[] = ['autograph', 'snek'];

export interface StagdSettings {
  /** Executable started with `--lsp --stdio` when no address is set; empty: look for one (daemonPath.ts). */
  readonly path: string;
  /** `host:port` of a daemon serving LSP over TCP; empty: start a daemon. */
  readonly address: string;
  readonly style: Style;
  /** Python interpreter the daemon stages with (stagd/graph); empty: the daemon's default. */
  readonly python: string;
  /** Variables for the staging helper's environment (initializationOptions.pythonEnv). */
  readonly pythonEnv: Readonly<Record<string, string>>;
  /** Bearer token of a daemon with --auth-token-file (initializationOptions.token); empty: none. */
  readonly token: string;
  /** PEM CA file: connect to stagd.address over TLS, trusting certificates it signed; empty: plain TCP. */
  readonly tlsCa: string;
  /** PEM certificate and key of this client, for a daemon with --tls-client-ca. */
  readonly tlsCert: string;
  readonly tlsKey: string;
}

export const DEFAULT_SETTINGS: StagdSettings = {
  path: '',
  address: '',
  style: 'autograph',
  python: '',
  pythonEnv: {},
  token: '',
  tlsCa: '',
  tlsCert: '',
  tlsKey: '',
};

/** TLS files for a TCP connection (paths; empty strings for none). */
export interface TlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** The lens commands the extension runs in its own views (initializationOptions.clientCommands). */
export const CLIENT_COMMANDS: readonly string[] = ['stagd.showConvertedCode', 'stagd.showGraph'];

/** How the extension reaches the server. */
export type ServerLaunch =
  | { readonly transport: 'stdio'; readonly command: string; readonly args: readonly string[] }
  | { readonly transport: 'tcp'; readonly host: string; readonly port: number; readonly tls?: TlsFiles };

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
  const text = (key: 'token' | 'tlsCa' | 'tlsCert' | 'tlsKey'): string => stringOr(get(key), DEFAULT_SETTINGS[key]).trim();
  const [token, tlsCa, tlsCert, tlsKey] = [text('token'), text('tlsCa'), text('tlsCert'), text('tlsKey')];
  if ((tlsCert === '') !== (tlsKey === '')) {
    throw new SettingsError('stagd.tlsCert and stagd.tlsKey go together (the client certificate and its key)');
  }
  return { path, address, style: rawStyle, python, pythonEnv: readEnv(get('pythonEnv')), token, tlsCa, tlsCert, tlsKey };
}

/** stagd.pythonEnv: an object of strings; anything else is an error saying so. */
function readEnv(value: unknown): Record<string, string> {
  if (value === undefined || value === null) {
    return {};
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new SettingsError(`stagd.pythonEnv must be an object such as {"PYTHONPATH": "/path/to/clients/python"}`);
  }
  const env: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string' || name === '' || name.includes('=')) {
      throw new SettingsError(`stagd.pythonEnv: '${name}' must be a variable name with a string value`);
    }
    env[name] = v;
  }
  return env;
}

/**
 * The server's initializationOptions (docs/lsp.md) for these settings. `pythonPath`
 * is the clients/python of a workspace build the daemon was found in: the helper's
 * PYTHONPATH unless stagd.pythonEnv says otherwise.
 */
export function initializationOptions(settings: StagdSettings, pythonPath?: string): Record<string, unknown> {
  const options: Record<string, unknown> = { style: settings.style, clientCommands: [...CLIENT_COMMANDS] };
  if (settings.python !== '') {
    options['python'] = settings.python;
  }
  if (Object.keys(settings.pythonEnv).length > 0) {
    options['pythonEnv'] = { ...settings.pythonEnv };
  } else if (pythonPath !== undefined) {
    options['pythonEnv'] = { PYTHONPATH: pythonPath };
  }
  if (settings.token !== '') {
    options['token'] = settings.token;
  }
  return options;
}

export function isStyle(value: string): value is Style {
  return (STYLES as readonly string[]).includes(value);
}

/**
 * The launch the settings ask for: TCP when an address is set, else stdio with
 * `daemon` (what daemonPath.ts found), or stagd.path as it is.
 */
export function serverLaunch(settings: StagdSettings, daemon?: string): ServerLaunch {
  if (settings.address !== '') {
    const { host, port } = parseAddress(settings.address);
    if (settings.tlsCa !== '' || settings.tlsCert !== '') {
      return { transport: 'tcp', host, port, tls: { ca: settings.tlsCa, cert: settings.tlsCert, key: settings.tlsKey } };
    }
    return { transport: 'tcp', host, port };
  }
  const command = daemon ?? settings.path;
  if (command === '') {
    throw new SettingsError('no stagd daemon: set stagd.path, or stagd.address for a running daemon');
  }
  return { transport: 'stdio', command, args: ['--lsp', '--stdio'] };
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
  return (
    before.path !== after.path ||
    before.address !== after.address ||
    before.python !== after.python ||
    before.token !== after.token ||
    before.tlsCa !== after.tlsCa ||
    before.tlsCert !== after.tlsCert ||
    before.tlsKey !== after.tlsKey ||
    JSON.stringify(before.pythonEnv) !== JSON.stringify(after.pythonEnv)
  );
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
