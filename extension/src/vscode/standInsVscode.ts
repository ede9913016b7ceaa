/** Draws the sandbox's stand-ins (standIns.ts) in the Explorer, as a file decoration with a tooltip. */

import * as vscode from 'vscode';

import { StandInMarks } from '../sandbox/standIns';

export interface StandInDecorations extends vscode.Disposable {
  /** The sidecar's list of every stand-in that exists now. */
  update(paths: readonly string[]): void;
}

export function registerStandInDecorations(): StandInDecorations {
  const marks = new StandInMarks();
  const changed = new vscode.EventEmitter<vscode.Uri[]>();
  const registration = vscode.window.registerFileDecorationProvider({
    onDidChangeFileDecorations: changed.event,
    provideFileDecoration(uri) {
      const mark = uri.scheme === 'file' ? marks.markFor(uri.fsPath) : undefined;
      return mark && { ...mark, color: new vscode.ThemeColor('disabledForeground'), propagate: false };
    },
  });
  return {
    update(paths) {
      const uris = marks.update(paths).map((path) => vscode.Uri.file(path));
      if (uris.length) changed.fire(uris);
    },
    dispose() {
      registration.dispose();
      changed.dispose();
    },
  };
}
