// SPDX-License-Identifier: Apache-2.0
/*
 * scrollSync.ts — keeps a Python source editor and its converted-code view
 * scrolled in step, through the source map.
 *
 * When one side scrolls, the other is revealed at the mapped line. Revealing
 * a line makes the editor report a scroll of its own; that echo is ignored for
 * a short quiet period, so the two sides do not chase each other.
 *
 * Pure: no VS Code import. The caller feeds scroll events in and performs the
 * reveals that come out.
 */

import { convertedLineFor, originalLineFor, type SourceMap } from './sourceMap';

export type Side = 'source' | 'converted';

export interface Reveal {
  readonly side: Side;
  /** 0-based line to put at the top of that side's editor. */
  readonly line: number;
}

/**
 * The line the other side should show at its top when `from` shows
 * `topLine` (0-based) at its top. Above the first mapped line, the other
 * side goes to its top too.
 */
export function scrollTarget(map: SourceMap, from: Side, topLine: number): Reveal {
  if (from === 'source') {
    return { side: 'converted', line: convertedLineFor(map, topLine) ?? 0 };
  }
  return { side: 'source', line: originalLineFor(map, topLine) ?? 0 };
}

export class ScrollSync {
  private map: SourceMap;
  /** Until when (clock ms) scroll events from each side are echoes of our reveals. */
  private readonly quietUntil: Record<Side, number> = { source: -Infinity, converted: -Infinity };
  private readonly lastReveal: Record<Side, number | undefined> = { source: undefined, converted: undefined };

  constructor(
    map: SourceMap,
    private readonly now: () => number = Date.now,
    private readonly quietMs = 150,
  ) {
    this.map = map;
  }

  /** A new source map (the source changed and was converted again). */
  setMap(map: SourceMap): void {
    this.map = map;
    this.lastReveal.source = undefined;
    this.lastReveal.converted = undefined;
  }

  /**
   * One side now shows `topLine` at its top. Returns the reveal to perform on
   * the other side, or undefined when this event is the echo of our own reveal
   * or the other side already shows the target line.
   */
  onScroll(from: Side, topLine: number): Reveal | undefined {
    if (this.now() < this.quietUntil[from]) {
      return undefined;
    }
    const reveal = scrollTarget(this.map, from, topLine);
    if (this.lastReveal[reveal.side] === reveal.line) {
      return undefined;
    }
    this.lastReveal[reveal.side] = reveal.line;
    // The side we scrolled by hand is the leader: forget what we last put there.
    this.lastReveal[from] = undefined;
    this.quietUntil[reveal.side] = this.now() + this.quietMs;
    return reveal;
  }
}
