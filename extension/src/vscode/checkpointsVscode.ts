/**
 * The `vscode` calls of checkpoints (checkpoints/checkpoints.ts): the changes view, per-file diffs, and the checkpoint side of
 * both. Part of the thin wrapper, kept apart from vscodeApi.ts so that module stays small; nothing else in here.
 */

import * as vscode from 'vscode';

import type { ChangesHost, DiffSide } from '../checkpoints/checkpoints';
import type { WithoutRef } from '../shared/changesBar';
import { WITHOUT_SCHEME, withoutRefOf, withoutUriParts } from '../shared/changesBar';
import type { CheckpointFileRef } from '../shared/checkpointView';
import { CHECKPOINT_SCHEME, checkpointRefOf, checkpointUriParts } from '../shared/checkpointView';

/** A diff side's URI (none: the file does not exist on that side). */
function sideUri(side: DiffSide): vscode.Uri | undefined {
  if (side === null) return undefined;
  if ('file' in side) return vscode.Uri.file(side.file);
  if ('without' in side) return vscode.Uri.from({ scheme: WITHOUT_SCHEME, ...withoutUriParts(side.without, side.shownAs) });
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, ...checkpointUriParts(side.checkpoint, side.shownAs) });
}

export const checkpointChanges: ChangesHost = {
  async showChanges(title, files) {
    const resources = files.map((file) => [vscode.Uri.file(file.onDisk), sideUri(file.original), sideUri(file.modified)]);
    try {
      await vscode.commands.executeCommand('vscode.changes', title, resources);
      return true;
    } catch {
      return false; // an editor without the changes view: the caller opens the files one by one
    }
  },
  async showDiff(title, file) {
    const empty = vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: file.onDisk }); // no query: an empty document
    const [left, right] = [sideUri(file.original) ?? empty, sideUri(file.modified) ?? empty];
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: false });
  },
  async closeChanges(title) {
    // The changes view's tab is labelled `title (N files)`; a diff opened from the list, `title: path`.
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.label === title || tab.label.startsWith(`${title} (`) || tab.label.startsWith(`${title}: `));
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
  },
  fileExists: async (path) => vscode.workspace.fs.stat(vscode.Uri.file(path)).then(() => true, () => false),
};

/** The checkpoint side of the diff views: `provide` gives a file's text at a checkpoint ('' for an unknown address). */
export function registerCheckpointContent(provide: (ref: CheckpointFileRef | undefined) => Promise<string>): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, {
    provideTextDocumentContent: (uri) => provide(checkpointRefOf(uri.query)),
  });
}

/** The changes bar's "without the agent's changes" side: `provide` gives its text ('' for an unknown address). */
export function registerWithoutContent(provide: (ref: WithoutRef | undefined) => Promise<string>): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(WITHOUT_SCHEME, {
    provideTextDocumentContent: (uri) => provide(withoutRefOf(uri.query)),
  });
}
