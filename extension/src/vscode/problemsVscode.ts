/** The editor's problems and documents, for the answerer of `toolgate/editor/problems` (src/editor/problems.ts). */

import * as vscode from 'vscode';

import type { ProblemsHost } from '../editor/problems';
import type { EditorProblem } from '../protocol.generated';
import { openFromDisk, PRESERVE_ACTIVE_GROUP } from './workbenchOpen';

const SEVERITIES: Record<vscode.DiagnosticSeverity, EditorProblem['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'information',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

function problemOf(diagnostic: vscode.Diagnostic): EditorProblem {
  const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
  return {
    line: diagnostic.range.start.line,
    character: diagnostic.range.start.character,
    severity: SEVERITIES[diagnostic.severity] ?? 'error',
    message: diagnostic.message,
    source: diagnostic.source ?? null,
    code: code === undefined ? null : String(code),
  };
}

function openDocument(path: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((document) => document.uri.scheme === 'file' && document.uri.fsPath === path);
}

function inTab(uri: vscode.Uri): boolean {
  return vscode.window.tabGroups.all.some((group) =>
    group.tabs.some((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.fsPath === uri.fsPath),
  );
}

/** Extensions that activate on a language may report problems for it (a language server, a linter). */
function activatesOn(extension: vscode.Extension<unknown>, languageId: string): boolean {
  const events = (extension.packageJSON as { activationEvents?: unknown }).activationEvents;
  return extension.isActive && Array.isArray(events) && events.includes(`onLanguage:${languageId}`);
}

export function problemsHost(): ProblemsHost {
  return {
    diagnostics: (path) => vscode.languages.getDiagnostics(vscode.Uri.file(path)).map(problemOf),
    allDiagnostics: () =>
      vscode.languages
        .getDiagnostics()
        .filter(([uri, list]) => uri.scheme === 'file' && list.length > 0)
        .map(([uri, list]) => [uri.fsPath, list.map(problemOf)]),
    onDiagnosticsChanged: (listener) =>
      vscode.languages.onDidChangeDiagnostics((event) =>
        listener(event.uris.filter((uri) => uri.scheme === 'file').map((uri) => uri.fsPath)),
      ),
    async openDocument(path, showInTab) {
      if (path.endsWith('.ipynb')) return undefined; // a notebook's problems are per cell; never shown as JSON text
      const uri = vscode.Uri.file(path);
      if (inTab(uri)) {
        const shown = openDocument(path);
        if (shown) return { languageId: shown.languageId, wasOpen: true };
      }
      try {
        const document = await vscode.workspace.openTextDocument(uri);
        // In a tab, not just loaded: some language servers (TypeScript's) check only the files shown in tabs. A
        // preview tab that leaves the focus where it was; none when the person turned that off.
        if (showInTab) await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
        return { languageId: document.languageId, wasOpen: false };
      } catch {
        return undefined; // binary, too large, or gone: no language server looks at it
      }
    },
    documentText: (path) => openDocument(path)?.getText(),
    languageOf: (path) => openDocument(path)?.languageId,
    openDocuments: () =>
      vscode.workspace.textDocuments
        .filter((document) => document.uri.scheme === 'file')
        .map((document) => [document.uri.fsPath, document.languageId]),
    isDirty: (path) => openDocument(path)?.isDirty ?? false,
    async reloadDocument(path, showInTab) {
      const document = openDocument(path);
      if (document === undefined || document.isDirty) return;
      if (!showInTab && !inTab(document.uri)) return; // it would open the tab the person's setting turned off
      // Where it is open (not a second tab in the active group), without taking the focus or the active group.
      await openFromDisk(document.uri, {
        preserveFocus: true,
        revealIfOpened: true,
        revealIfVisible: true,
        activation: PRESERVE_ACTIVE_GROUP,
      });
    },
    onDocumentChanged: (listener) =>
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document.uri.scheme === 'file') listener(event.document.uri.fsPath);
      }),
    activeExtensionsOn: (languageId) =>
      vscode.extensions.all.filter((extension) => activatesOn(extension, languageId)).map((extension) => extension.id),
    editorSetting: (name) => vscode.workspace.getConfiguration().get(name),
  };
}
