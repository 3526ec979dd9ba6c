/*
 * graphView.ts — the graph of a Python file in a webview beside it: the
 * server's `stagd/graph` dump drawn as SVG by Graphviz's `dot` when it is on
 * the PATH, shown as preformatted text otherwise (or when `dot` fails).
 */

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { findDot } from './dot';
import { graphHtml } from './graphHtml';
import type { Style } from './settings';
import { graphContent } from './viewContent';

export class GraphView implements vscode.Disposable {
  /** One panel per source URI (and function), reused when the command runs again. */
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly style: () => Style,
    private readonly dotPath: () => string | undefined = findDot,
  ) {}

  /** Shows the graph of `source`, or of its function `fn` only. */
  async show(source: vscode.TextEditor, fn?: string): Promise<void> {
    const client = this.client();
    if (client === undefined) {
      void vscode.window.showErrorMessage('stagd is not running: see the "stagd" output channel.');
      return;
    }
    const uri = source.document.uri;
    const file = uri.path.split('/').pop() ?? uri.path;
    const title = fn === undefined ? `Graph: ${file}` : `Graph: ${file} · ${fn}`;
    const panel = this.panelFor(uri, fn, title);
    panel.webview.html = graphHtml(title, { kind: 'text', text: 'Staging…' });
    const send = (method: string, params: unknown) => client.sendRequest(method, params);
    panel.webview.html = graphHtml(title, await graphContent(send, uri.toString(), this.style(), this.dotPath(), fn));
  }

  dispose(): void {
    this.panels.forEach((p) => p.dispose());
  }

  private panelFor(uri: vscode.Uri, fn: string | undefined, title: string): vscode.WebviewPanel {
    const key = fn === undefined ? uri.toString() : `${uri.toString()}#${fn}`;
    const existing = this.panels.get(key);
    if (existing !== undefined) {
      existing.reveal(vscode.ViewColumn.Beside, true);
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(
      'stagd.graph',
      title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: false, localResourceRoots: [] },
    );
    panel.onDidDispose(() => this.panels.delete(key));
    this.panels.set(key, panel);
    return panel;
  }
}
