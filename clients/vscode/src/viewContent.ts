// SPDX-License-Identifier: Apache-2.0
/*
 * viewContent.ts — what the converted-code view and the graph view show for
 * a source document: the server's answer, or the error in words the user can
 * act on. The request goes through `send` (the language client's
 * `sendRequest`), so this runs, and is tested, without VS Code.
 */

import { renderSvg } from './dot';
import type { GraphContent } from './graphHtml';
import {
  CONVERTED_CODE_METHOD,
  GRAPH_METHOD,
  parseConvertedCode,
  parseGraph,
  type ConvertedCodeParams,
  type GraphFormat,
  type GraphParams,
  type Position,
} from './protocol';
import type { Style } from './settings';
import type { SourceMap } from './sourceMap';

export type Send = (method: string, params: unknown) => Promise<unknown>;

export interface ConvertedView {
  readonly text: string;
  /** Empty when the conversion failed. */
  readonly sourceMap: SourceMap;
  readonly ok: boolean;
}

const EMPTY_MAP: SourceMap = { byConverted: [], byOriginal: [] };

/** The converted view's text; a failure becomes a Python comment saying why. */
export async function convertedView(send: Send, uri: string, style: Style, label: string): Promise<ConvertedView> {
  const params: ConvertedCodeParams = { textDocument: { uri }, style };
  try {
    const r = parseConvertedCode(await send(CONVERTED_CODE_METHOD, params));
    return { text: r.text, sourceMap: r.sourceMap, ok: true };
  } catch (e) {
    const why = errorText(e)
      .split('\n')
      .map((l) => `# ${l}`)
      .join('\n');
    return { text: `# stagd could not convert ${label}:\n${why}\n`, sourceMap: EMPTY_MAP, ok: false };
  }
}

/** The function a graph is asked for: by name (a code lens) or by a position in it (the cursor). */
export type GraphTarget = string | Position;

/**
 * The graph view's content for the function `target` names or holds: SVG
 * when `dot` is given and the server sent DOT, else the text dump, with a
 * note when something fell back.
 */
export async function graphContent(
  send: Send,
  uri: string,
  style: Style,
  dot: string | undefined,
  target: GraphTarget,
): Promise<GraphContent> {
  const format: GraphFormat = dot !== undefined ? 'dot' : 'text';
  const params: GraphParams =
    typeof target === 'string'
      ? { textDocument: { uri }, style, format, function: target }
      : { textDocument: { uri }, style, format, position: { line: target.line, character: target.character } };
  let graph;
  try {
    graph = parseGraph(await send(GRAPH_METHOD, params), format);
  } catch (e) {
    return { kind: 'text', text: errorText(e), note: `stagd could not stage this function.${settingHint(e)}` };
  }
  if (graph.format === 'dot' && dot !== undefined) {
    try {
      return { kind: 'svg', svg: await renderSvg(dot, graph.text) };
    } catch (e) {
      return { kind: 'text', text: graph.text, note: `${errorText(e)}; showing the DOT text.` };
    }
  }
  if (dot === undefined) {
    return { kind: 'text', text: graph.text, note: 'Graphviz (dot) was not found on the PATH: showing the text dump.' };
  }
  return { kind: 'text', text: graph.text };
}

/**
 * The setting that fixes a staging helper that did not run (docs/editors.md), as a
 * sentence to append, or "" for errors in the user's code.
 */
export function settingHint(e: unknown): string {
  const message = typeof e === 'object' && e !== null && 'message' in e ? String((e as { message: unknown }).message) : '';
  if (/No module named '?stagd/.test(message)) {
    return (
      ' The staging helper cannot import the stagd package: set stagd.pythonEnv to ' +
      '{"PYTHONPATH": "<your stagd checkout>/clients/python"}, or stagd.python to an interpreter that has it installed.'
    );
  }
  if (/cannot start '/.test(message)) {
    return ' The staging helper\'s interpreter does not run: set stagd.python to a Python 3 interpreter.';
  }
  return '';
}

/**
 * An error as the user should read it: a JSON-RPC error's message with its
 * code and, when the server located it, `file:line:column` (docs/api.md: the
 * location is in the error's `data`).
 */
export function errorText(e: unknown): string {
  if (typeof e !== 'object' || e === null) {
    return String(e);
  }
  const err = e as { message?: unknown; code?: unknown; data?: unknown };
  const message = typeof err.message === 'string' ? err.message : String(e);
  const data = (typeof err.data === 'object' && err.data !== null ? err.data : {}) as Record<string, unknown>;
  const where =
    typeof data['line'] === 'number' || typeof data['line'] === 'string'
      ? `${typeof data['file'] === 'string' ? data['file'] : '<source>'}:${String(data['line'])}:${String(data['column'] ?? 1)}: `
      : '';
  const status = typeof data['status'] === 'string' ? ` [${data['status']}]` : '';
  const code = typeof err.code === 'number' ? ` (error ${err.code})` : '';
  return `${where}${message}${status}${code}`;
}
