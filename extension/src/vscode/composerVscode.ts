/**
 * The `vscode` calls of the composer (chat/composerHost.ts): the workspace's files and symbols, the editor's
 * problems and the active editor's selection. Part of the thin wrapper, kept apart from vscodeApi.ts.
 */

import * as vscode from 'vscode';

import type { ComposerEditor, EditorSymbol } from '../chat/composerHost';
import { problemsHost } from './problemsVscode';

export const composerEditor: ComposerEditor = {
  async workspaceFiles(max) {
    // The files.exclude and search.exclude settings apply (undefined exclude), as in the editor's own quick open.
    const uris = await vscode.workspace.findFiles('**/*', undefined, max);
    return uris.filter((uri) => uri.scheme === 'file').map((uri) => uri.fsPath);
  },
  async workspaceSymbols(query) {
    const found = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>(
      'vscode.executeWorkspaceSymbolProvider',
      query,
    );
    return (found ?? [])
      .filter((symbol) => symbol.location.uri.scheme === 'file')
      .map(
        (symbol): EditorSymbol => ({
          name: symbol.name,
          kind: vscode.SymbolKind[symbol.kind] ?? 'Symbol',
          container: symbol.containerName,
          path: symbol.location.uri.fsPath,
          startLine: symbol.location.range.start.line + 1,
          endLine: symbol.location.range.end.line + 1,
        }),
      );
  },
  problems() {
    // The one reader of the editor's problems, the one that answers the sidecar's toolgate/editor/problems.
    return problemsHost()
      .allDiagnostics()
      .flatMap(([, problems]) => problems);
  },
  activeSelection() {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') return undefined;
    const { start, end, isEmpty } = editor.selection;
    // A selection that ends at the start of a line does not take that line (a whole-line selection by keyboard).
    const last = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
    return { path: editor.document.uri.fsPath, startLine: start.line + 1, endLine: last, empty: isEmpty };
  },
  workspaceRoot() {
    return vscode.workspace.workspaceFolders?.find((folder) => folder.uri.scheme === 'file')?.uri.fsPath;
  },
};
