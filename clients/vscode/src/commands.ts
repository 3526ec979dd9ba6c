// SPDX-License-Identifier: Apache-2.0
/*
 * commands.ts — the command ids the extension registers (package.json's
 * `contributes.commands` must list exactly these; a unit test checks it) and
 * the argument a server code lens may pass them: `{uri, function?}`.
 *
 * Pure: no VS Code import.
 */

export const COMMANDS = {
  showConvertedCode: 'stagd.showConvertedCode',
  showGraph: 'stagd.showGraph',
} as const;

/** What a command acts on when a code lens names it; absent: the active editor. */
export interface CommandTarget {
  readonly uri: string;
  readonly function?: string;
}

/**
 * Reads a command's first argument: undefined (run from the palette), or a
 * `{uri, function?}` object from a code lens. Anything else is an error, so a
 * server sending the wrong shape is noticed.
 */
export function parseCommandTarget(arg: unknown): CommandTarget | undefined {
  if (arg === undefined || arg === null) {
    return undefined;
  }
  if (typeof arg !== 'object' || Array.isArray(arg)) {
    throw new Error(`stagd: a command argument must be {uri, function?}, got ${JSON.stringify(arg)}`);
  }
  const { uri, function: fn } = arg as { uri?: unknown; function?: unknown };
  if (typeof uri !== 'string' || uri === '') {
    throw new Error('stagd: the command argument needs a uri string');
  }
  if (fn !== undefined && typeof fn !== 'string') {
    throw new Error('stagd: the command argument function must be a string');
  }
  return fn === undefined || fn === '' ? { uri } : { uri, function: fn };
}
