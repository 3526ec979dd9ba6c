// SPDX-License-Identifier: Apache-2.0
/*
 * protocol.ts — the stagd custom LSP requests the extension sends, with their
 * parameter and result shapes, and checks of the results as they arrive.
 *
 *   stagd/convertedCode  {textDocument: {uri}, style}
 *                        → {text, sourceMap: [{convertedLine, original: {line, column}}]}
 *   stagd/graph          {textDocument: {uri}, style, format: "dot" | "text",
 *                         function? | position?: {line, character}}
 *                        → {function, format, text, sexpr, graphId, params, diagnostics}
 *
 * Lines and columns in results are 1-based (the stagd API's `Location`).
 * Pure: no VS Code import.
 */

import type { Style } from './settings';
import { parseSourceMap, type SourceMap } from './sourceMap';

export const CONVERTED_CODE_METHOD = 'stagd/convertedCode';
export const GRAPH_METHOD = 'stagd/graph';

export interface TextDocumentIdentifier {
  readonly uri: string;
}

export interface ConvertedCodeParams {
  readonly textDocument: TextDocumentIdentifier;
  readonly style: Style;
}

export interface ConvertedCode {
  readonly text: string;
  readonly sourceMap: SourceMap;
}

export type GraphFormat = 'dot' | 'text';

/** An LSP position (0-based line, character in the negotiated encoding). */
export interface Position {
  readonly line: number;
  readonly character: number;
}

export interface GraphParams {
  readonly textDocument: TextDocumentIdentifier;
  readonly style: Style;
  readonly format: GraphFormat;
  /** The function to stage ("f" or "Class.method")... */
  readonly function?: string;
  /** ...or a position inside it (the cursor). */
  readonly position?: Position;
}

export interface Graph {
  readonly format: GraphFormat;
  readonly text: string;
  /** The function the server staged, when it says. */
  readonly function?: string;
}

export class ProtocolError extends Error {
  constructor(method: string, message: string) {
    super(`${method}: ${message}`);
    this.name = 'ProtocolError';
  }
}

/** Checks a `stagd/convertedCode` result. proto3 JSON leaves out empty fields. */
export function parseConvertedCode(result: unknown): ConvertedCode {
  const r = asObject(result, CONVERTED_CODE_METHOD);
  const text = r['text'] ?? '';
  if (typeof text !== 'string') {
    throw new ProtocolError(CONVERTED_CODE_METHOD, 'result.text must be a string');
  }
  try {
    return { text, sourceMap: parseSourceMap(r['sourceMap']) };
  } catch (e) {
    throw new ProtocolError(CONVERTED_CODE_METHOD, `result.${(e as Error).message}`);
  }
}

/** Checks a `stagd/graph` result; a missing format is the one asked for. */
export function parseGraph(result: unknown, asked: GraphFormat): Graph {
  const r = asObject(result, GRAPH_METHOD);
  const text = r['text'] ?? '';
  const format = r['format'] ?? asked;
  if (typeof text !== 'string') {
    throw new ProtocolError(GRAPH_METHOD, 'result.text must be a string');
  }
  if (format !== 'dot' && format !== 'text') {
    throw new ProtocolError(GRAPH_METHOD, `result.format must be "dot" or "text", got ${JSON.stringify(format)}`);
  }
  const fn = r['function'];
  if (fn !== undefined && typeof fn !== 'string') {
    throw new ProtocolError(GRAPH_METHOD, 'result.function must be a string');
  }
  return fn === undefined ? { format, text } : { format, text, function: fn };
}

function asObject(result: unknown, method: string): Record<string, unknown> {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new ProtocolError(method, 'the result must be an object');
  }
  return result as Record<string, unknown>;
}
