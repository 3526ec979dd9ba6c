// SPDX-License-Identifier: Apache-2.0
/*
 * convertedView.ts — the read-only view of a Python file's converted code.
 *
 * A TextDocumentContentProvider serves the `stagd-converted:` scheme: the
 * view of `file:///a/b.py` is `stagd-converted:/a/b.converted.py?<source uri>`,
 * its text comes from the server's `stagd/convertedCode` request, and it is
 * refreshed as the source is edited. The source and the view scroll in step
 * through the source map (the mapping itself is in scrollSync.ts).
 */

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ScrollSync, type Reveal } from './scrollSync';
import type { Style } from './settings';
import type { SourceMap } from './sourceMap';
import { convertedView } from './viewContent';

export const CONVERTED_SCHEME = 'stagd-converted';

/** The converted view's URI for a source document. */
export function convertedUri(source: vscode.Uri): vscode.Uri {
  const base = source.path.replace(/\.pyi?$/, '');
  return vscode.Uri.from({ scheme: CONVERTED_SCHEME, path: `${base}.converted.py`, query: source.toString() });
}

/** The source document's URI of a converted view. */
export function sourceUriOf(converted: vscode.Uri): vscode.Uri {
  return vscode.Uri.parse(converted.query, true);
}

const REFRESH_DELAY_MS = 300;

export class ConvertedCodeProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Scroll state per source URI string, for views that have been shown. */
  private readonly syncs = new Map<string, ScrollSync>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly style: () => Style,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => this.sourceChanged(e.document.uri)),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => this.scrolled(e.textEditor)),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme === CONVERTED_SCHEME) {
          this.syncs.delete(sourceUriOf(d.uri).toString());
        }
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const client = this.client();
    if (client === undefined) {
      return '# stagd is not running: see the "stagd" output channel.\n';
    }
    const source = sourceUriOf(uri);
    const send = (method: string, params: unknown) => client.sendRequest(method, params, token);
    // A conversion error is shown in the view itself: that is where the user looks.
    const view = await convertedView(send, source.toString(), this.style(), source.fsPath);
    this.syncFor(source).setMap(view.sourceMap);
    return view.text;
  }

  /** Opens the converted view of `source` beside it. */
  async show(source: vscode.TextEditor): Promise<void> {
    const uri = convertedUri(source.document.uri);
    this.syncFor(source.document.uri);
    const alreadyOpen = vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString());
    const doc = await vscode.workspace.openTextDocument(uri);
    if (alreadyOpen) {
      this.changed.fire(uri); // convert again: the server may have restarted since
    }
    await vscode.window.showTextDocument(doc, {
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: true,
      preview: false,
    });
    this.scrolled(source);
  }

  /** Every open view is converted again (the style setting changed). */
  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === CONVERTED_SCHEME) {
        this.changed.fire(doc.uri);
      }
    }
  }

  dispose(): void {
    this.pending.forEach((t) => clearTimeout(t));
    this.disposables.forEach((d) => d.dispose());
    this.changed.dispose();
  }

  private syncFor(source: vscode.Uri): ScrollSync {
    const key = source.toString();
    let sync = this.syncs.get(key);
    if (sync === undefined) {
      const empty: SourceMap = { byConverted: [], byOriginal: [] };
      sync = new ScrollSync(empty);
      this.syncs.set(key, sync);
    }
    return sync;
  }

  /** A source was edited: convert it again once typing pauses, if its view is open. */
  private sourceChanged(source: vscode.Uri): void {
    if (source.scheme === CONVERTED_SCHEME) {
      return;
    }
    const view = convertedUri(source);
    if (!vscode.workspace.textDocuments.some((d) => d.uri.toString() === view.toString())) {
      return;
    }
    const key = source.toString();
    clearTimeout(this.pending.get(key));
    this.pending.set(
      key,
      setTimeout(() => {
        this.pending.delete(key);
        this.changed.fire(view);
      }, REFRESH_DELAY_MS),
    );
  }

  private scrolled(editor: vscode.TextEditor): void {
    const uri = editor.document.uri;
    const isView = uri.scheme === CONVERTED_SCHEME;
    const source = isView ? sourceUriOf(uri) : uri;
    const sync = this.syncs.get(source.toString());
    const top = editor.visibleRanges[0]?.start.line;
    if (sync === undefined || top === undefined) {
      return;
    }
    const reveal = sync.onScroll(isView ? 'converted' : 'source', top);
    if (reveal !== undefined) {
      this.reveal(source, reveal);
    }
  }

  private reveal(source: vscode.Uri, reveal: Reveal): void {
    const target = reveal.side === 'converted' ? convertedUri(source).toString() : source.toString();
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() === target) {
        const line = Math.min(reveal.line, Math.max(editor.document.lineCount - 1, 0));
        editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.AtTop);
      }
    }
  }
}
