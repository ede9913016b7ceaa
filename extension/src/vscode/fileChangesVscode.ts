/** Files changed on disk in the workspace, by anyone (the person's editor, a formatter, a terminal). */

import * as vscode from 'vscode';

/** Calls `listener` with the absolute path of each workspace file created, changed or deleted on disk. */
export function onWorkspaceFileChanged(listener: (fsPath: string) => void): vscode.Disposable {
  // VS Code already watches the workspace folders recursively; a watcher on them shares that watch.
  const watcher = vscode.workspace.createFileSystemWatcher('**/*');
  const tell = (uri: vscode.Uri) => {
    if (uri.scheme === 'file') listener(uri.fsPath);
  };
  const subscriptions = [watcher.onDidChange(tell), watcher.onDidCreate(tell), watcher.onDidDelete(tell)];
  return vscode.Disposable.from(watcher, ...subscriptions);
}
