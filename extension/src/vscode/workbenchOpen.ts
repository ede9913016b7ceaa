/**
 * Opening a file with its text read from disk again, through VS Code's own `_workbench.open` (what `vscode.open`
 * calls) with the editor option `forceReload`, which `vscode.open` and `showTextDocument` do not pass on: the editor
 * sets its input again, and resolving it has the document's model read its file again when the file changed on
 * disk. VS Code keeps a closed file's model for a while, and its file watcher can miss a change (a folder made and
 * filled at once): opened the public way, such a file shows its old text, and the reload that comes later moves the
 * cursor off the place it was opened at. A model never reloads while it has unsaved changes or is being saved, so
 * the person's edits are safe. The command is internal: when a VS Code lacks it the call fails, and the caller says
 * so or opens the file the public way.
 */

import * as vscode from 'vscode';

const WORKBENCH_OPEN = '_workbench.open';
/**
 * ACTIVE_GROUP, named as `vscode.open` names it: an undefined column would arrive as null, which VS Code reads as "a
 * group beside". With the reveal options it still goes to the group that has the document open.
 */
const ACTIVE_GROUP = -1;
/** EditorActivation.PRESERVE: the group the editor is in is not made the active one. */
export const PRESERVE_ACTIVE_GROUP = 3;

/** The editor options (VS Code's ITextEditorOptions) the callers here use; lines and columns are 1-based. */
export interface FromDiskOptions {
  preserveFocus?: boolean;
  revealIfOpened?: boolean;
  revealIfVisible?: boolean;
  activation?: number;
  pinned?: boolean;
  selection?: { startLineNumber: number; startColumn: number };
}

export async function openFromDisk(uri: vscode.Uri, options: FromDiskOptions): Promise<void> {
  await vscode.commands.executeCommand(WORKBENCH_OPEN, uri, [ACTIVE_GROUP, { ...options, forceReload: true }]);
}
