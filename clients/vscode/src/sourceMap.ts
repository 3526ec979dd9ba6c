// SPDX-License-Identifier: Apache-2.0
/*
 * sourceMap.ts — the source map that `stagd/convertedCode` returns and the
 * lookups between converted and original lines.
 *
 * On the wire (proto3 JSON of `stagd.v1.SourceMapEntry`) lines and columns are
 * 1-based, as everywhere in the stagd API; the functions here take and return
 * 0-based lines, as VS Code does, and convert at the boundary.
 *
 * Pure: no VS Code import.
 */

/** One entry as the server sends it (1-based). */
export interface WireSourceMapEntry {
  readonly convertedLine: number;
  readonly original: { readonly line: number; readonly column?: number };
}

/** One entry in 0-based lines and columns. */
export interface MapEntry {
  readonly convertedLine: number;
  readonly originalLine: number;
  readonly originalColumn: number;
}

/**
 * A checked source map: entries sorted by converted line (then original line),
 * plus a second view sorted by original line for the reverse direction.
 */
export interface SourceMap {
  readonly byConverted: readonly MapEntry[];
  readonly byOriginal: readonly MapEntry[];
}

export class SourceMapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceMapError';
  }
}

/**
 * Checks a wire source map and converts it to 0-based lines. Throws on
 * anything that is not an array of entries with positive whole-number lines,
 * naming the bad entry, so a server bug shows as a clear message rather than
 * as a view that scrolls to nonsense.
 */
export function parseSourceMap(wire: unknown): SourceMap {
  if (wire === undefined || wire === null) {
    return { byConverted: [], byOriginal: [] };
  }
  if (!Array.isArray(wire)) {
    throw new SourceMapError('sourceMap must be an array');
  }
  const entries: MapEntry[] = wire.map((raw: unknown, i: number) => {
    if (typeof raw !== 'object' || raw === null) {
      throw new SourceMapError(`sourceMap[${i}] must be an object`);
    }
    const e = raw as { convertedLine?: unknown; original?: unknown };
    const convertedLine = positiveInt(e.convertedLine, `sourceMap[${i}].convertedLine`);
    if (typeof e.original !== 'object' || e.original === null) {
      throw new SourceMapError(`sourceMap[${i}].original must be an object`);
    }
    const o = e.original as { line?: unknown; column?: unknown };
    const line = positiveInt(o.line, `sourceMap[${i}].original.line`);
    // proto3 JSON leaves out fields at their default: a missing column is column 1.
    const column = o.column === undefined ? 1 : positiveInt(o.column, `sourceMap[${i}].original.column`);
    return { convertedLine: convertedLine - 1, originalLine: line - 1, originalColumn: column - 1 };
  });
  const byConverted = [...entries].sort(
    (a, b) => a.convertedLine - b.convertedLine || a.originalLine - b.originalLine,
  );
  const byOriginal = [...entries].sort(
    (a, b) => a.originalLine - b.originalLine || a.convertedLine - b.convertedLine,
  );
  return { byConverted, byOriginal };
}

/**
 * The original line that a converted line comes from: the entry for that
 * converted line, or else the nearest entry above it (generated lines without
 * an entry belong to the statement mapped before them). Undefined above the
 * first entry or for an empty map.
 */
export function originalLineFor(map: SourceMap, convertedLine: number): number | undefined {
  const e = lastAtOrBefore(map.byConverted, convertedLine, (x) => x.convertedLine);
  return e?.originalLine;
}

/**
 * The first converted line generated from an original line; when no entry
 * names that line exactly (a comment, a blank line), the first converted line
 * of the nearest mapped original line above it. Undefined above the first
 * mapped original line or for an empty map.
 */
export function convertedLineFor(map: SourceMap, originalLine: number): number | undefined {
  const e = lastAtOrBefore(map.byOriginal, originalLine, (x) => x.originalLine);
  if (e === undefined) {
    return undefined;
  }
  // byOriginal is sorted by (originalLine, convertedLine): find the first of the run.
  const first = firstAtOrAfter(map.byOriginal, e.originalLine, (x) => x.originalLine);
  return first?.convertedLine;
}

/** Binary search: the last entry whose key is <= target. */
function lastAtOrBefore(
  xs: readonly MapEntry[],
  target: number,
  key: (e: MapEntry) => number,
): MapEntry | undefined {
  let lo = 0;
  let hi = xs.length; // invariant: xs[0..lo) <= target, xs[hi..) > target
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(xs[mid] as MapEntry) <= target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo === 0 ? undefined : xs[lo - 1];
}

/** Binary search: the first entry whose key is >= target. */
function firstAtOrAfter(
  xs: readonly MapEntry[],
  target: number,
  key: (e: MapEntry) => number,
): MapEntry | undefined {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(xs[mid] as MapEntry) < target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return xs[lo];
}

function positiveInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new SourceMapError(`${what} must be a whole number >= 1 (lines and columns are 1-based), got ${JSON.stringify(value)}`);
  }
  return value;
}
