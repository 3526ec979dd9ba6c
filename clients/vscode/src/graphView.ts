// SPDX-License-Identifier: Apache-2.0
/*
 * graphView.ts — the staged graph of a Python function in a webview beside
 * it: the server's `stagd/graph` dump (the function a code lens names, else
 * the one under the cursor) drawn as SVG by Graphviz's `dot` when it is on
 * the PATH, shown as preformatted text otherwise (or when `dot` fails).
 */

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { findDot } from './dot';
import { graphHtml } from './graphHtml';
import type { Style } from './settings';
import { graphContent } from './viewContent';

export class GraphView implements vscode.Disposable {
  /** One panel per source URI and function (or cursor line), reused when the command runs again. */
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly style: () => Style,
    private readonly dotPath: () => string | undefined = findDot,
  ) {}

  /** Shows the graph of function `fn` of `source`, else of the function under its cursor. */
  async show(source: vscode.TextEditor, fn?: string): Promise<void> {
    const client = this.client();
    if (client === undefined) {
      void vscode.window.showErrorMessage('stagd is not running: see the "stagd" output channel.');
      return;
    }
    const uri = source.document.uri;
    const file = uri.path.split('/').pop() ?? uri.path;
    const cursor = source.selection.active;
    const where = fn ?? `line ${cursor.line + 1}`;
    const title = `Graph: ${file} · ${where}`;
    const panel = this.panelFor(uri, where, title);
    panel.webview.html = graphHtml(title, { kind: 'text', text: 'Staging…' });
    const send = (method: string, params: unknown) => client.sendRequest(method, params);
    const target = fn ?? { line: cursor.line, character: cursor.character };
    panel.webview.html = graphHtml(title, await graphContent(send, uri.toString(), this.style(), this.dotPath(), target));
  }

  dispose(): void {
    this.panels.forEach((p) => p.dispose());
  }

  private panelFor(uri: vscode.Uri, where: string, title: string): vscode.WebviewPanel {
    const key = `${uri.toString()}#${where}`;
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
