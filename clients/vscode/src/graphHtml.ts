// SPDX-License-Identifier: Apache-2.0
/*
 * graphHtml.ts — the HTML of the graph webview: the SVG that `dot` drew, or
 * the graph dump as preformatted text when there is no `dot` (or it failed).
 *
 * The page runs no script: its Content-Security-Policy allows none, and SVG
 * from `dot` is inlined after its XML prolog and DOCTYPE are removed.
 * Pure: no VS Code import.
 */

export type GraphContent =
  | { readonly kind: 'svg'; readonly svg: string }
  | { readonly kind: 'text'; readonly text: string; readonly note?: string };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The `<svg …>…</svg>` element of dot's output, without prolog, DOCTYPE or comments before it. */
export function svgElement(svg: string): string {
  const start = svg.search(/<svg[\s>]/);
  if (start < 0) {
    throw new Error('dot produced no <svg> element');
  }
  return svg.slice(start).trim();
}

export function graphHtml(title: string, content: GraphContent): string {
  const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:;";
  const body =
    content.kind === 'svg'
      ? `<div class="graph">${svgElement(content.svg)}</div>`
      : `${content.note !== undefined ? `<p class="note">${escapeHtml(content.note)}</p>` : ''}<pre>${escapeHtml(content.text)}</pre>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>${escapeHtml(title)}</title>
<style>
  body { color: var(--vscode-editor-foreground); background: var(--vscode-editor-background); }
  pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
  .note { font-style: italic; }
  .graph svg { max-width: 100%; height: auto; background: white; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}
