// SPDX-License-Identifier: Apache-2.0
/*
 * extension.ts — the entry point: starts the stagd language client per the
 * settings (a `stagd --lsp --stdio` child — the daemon daemonPath.ts finds — or
 * TCP to `stagd.address`), restarts it when the path, address or Python settings
 * change, and registers the converted-code view and the graph view with their
 * commands.
 */

import { accessSync, constants, statSync } from 'node:fs';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { createClient } from './client';
import { COMMANDS, parseCommandTarget } from './commands';
import { findDaemon, type DaemonLookup } from './daemonPath';
import { CONVERTED_SCHEME, ConvertedCodeProvider } from './convertedView';
import { GraphView } from './graphView';
import { initializationOptions, needsRestart, readSettings, serverLaunch, type StagdSettings } from './settings';

let client: LanguageClient | undefined;
let settings: StagdSettings | undefined;
let output: vscode.OutputChannel | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('stagd');
  context.subscriptions.push(output);

  const style = () => settings?.style ?? 'autograph';
  const converted = new ConvertedCodeProvider(() => client, style);
  const graphs = new GraphView(() => client, style);
  context.subscriptions.push(
    converted,
    graphs,
    vscode.workspace.registerTextDocumentContentProvider(CONVERTED_SCHEME, converted),
    vscode.commands.registerCommand(COMMANDS.showConvertedCode, (arg?: unknown) =>
      withPythonEditor(arg, (e) => converted.show(e)),
    ),
    vscode.commands.registerCommand(COMMANDS.showGraph, (arg?: unknown) =>
      withPythonEditor(arg, (e, fn) => graphs.show(e, fn)),
    ),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('stagd')) {
        return;
      }
      const before = settings;
      if (!loadSettings()) {
        return;
      }
      if (before === undefined || settings === undefined || needsRestart(before, settings)) {
        await restart();
      }
      converted.refreshAll();
    }),
  );

  if (loadSettings()) {
    await start();
  }
}

export async function deactivate(): Promise<void> {
  await stop();
}

/** Reads the settings; reports a bad one and keeps the previous ones. */
function loadSettings(): boolean {
  try {
    settings = readSettings((key) => vscode.workspace.getConfiguration('stagd').get(key));
    return true;
  } catch (e) {
    void vscode.window.showErrorMessage((e as Error).message);
    return false;
  }
}

async function start(): Promise<void> {
  if (settings === undefined || output === undefined) {
    return;
  }
  try {
    let daemon: string | undefined;
    let pythonPath: string | undefined;
    if (settings.address === '') {
      const found = findDaemon(settings.path, fileSystemLookup());
      daemon = found.path;
      pythonPath = found.pythonPath;
      output.appendLine(`starting ${found.path} --lsp --stdio (found: ${found.from})`);
    }
    const c = createClient(serverLaunch(settings, daemon), output, initializationOptions(settings, pythonPath));
    await c.start();
    client = c;
  } catch (e) {
    client = undefined;
    const message = `stagd did not start: ${(e as Error).message}`;
    output.appendLine(message);
    void vscode.window.showErrorMessage(message, 'Open Settings').then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'stagd');
      }
    });
  }
}

/** The real file system and PATH, for the daemon lookup. */
function fileSystemLookup(): DaemonLookup {
  const isFile = (f: string): boolean => {
    try {
      return statSync(f).isFile();
    } catch {
      return false;
    }
  };
  return {
    searchPath: process.env['PATH'] ?? '',
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    isFile,
    isExecutable: (f) => {
      try {
        accessSync(f, constants.X_OK);
        return isFile(f);
      } catch {
        return false;
      }
    },
  };
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c !== undefined) {
    try {
      await c.stop();
    } catch (e) {
      output?.appendLine(`stopping stagd: ${(e as Error).message}`);
    }
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

/**
 * Runs `action` on the editor a command is for: the document a code lens
 * names (`{uri, function?}`), else the active editor, which must be Python.
 */
async function withPythonEditor(
  arg: unknown,
  action: (editor: vscode.TextEditor, fn: string | undefined) => Promise<void>,
): Promise<void> {
  let editor: vscode.TextEditor | undefined;
  let fn: string | undefined;
  try {
    const target = parseCommandTarget(arg);
    if (target !== undefined) {
      fn = target.function;
      editor =
        vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === target.uri) ??
        (await vscode.window.showTextDocument(vscode.Uri.parse(target.uri, true)));
    } else {
      editor = vscode.window.activeTextEditor;
    }
  } catch (e) {
    void vscode.window.showErrorMessage((e as Error).message);
    return;
  }
  if (editor === undefined || editor.document.languageId !== 'python' || editor.document.uri.scheme === CONVERTED_SCHEME) {
    void vscode.window.showInformationMessage('stagd: open a Python file first.');
    return;
  }
  await action(editor, fn);
}
