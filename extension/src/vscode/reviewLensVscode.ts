/**
 * The `vscode` calls of per-hunk review decisions (review/hunkDecisions.ts): a CodeLens above each hunk of a
 * proposal under review, the commands they run (also from the keyboard, at the cursor), and the edit that puts a
 * hunk's original lines back in the proposal document. Part of the thin wrapper; nothing else in here.
 */

import * as vscode from 'vscode';

import type { ResourceRef } from '../host';
import type { HunkDecisions, HunkTarget, ProposalEditor } from '../review/hunkDecisions';
import { ORIGINAL_SCHEME, PROPOSED_SCHEME } from '../review/proposals';
import { activeEditorResource, resourceOf, uriOf } from './vscodeApi';

export const proposalEditor: ProposalEditor = {
  async replaceText(resource, text) {
    const document = await vscode.workspace.openTextDocument(uriOf(resource));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), text);
    await vscode.workspace.applyEdit(edit);
  },
};

/** The proposal a command is for: the lens's document, or the editor that has the keyboard. */
function targetOf(uri: unknown): ResourceRef | undefined {
  return resourceOf(uri) ?? activeEditorResource();
}

/** The lens's hunk, or the one under the cursor (the command from a keybinding or the palette). */
function hunkTarget(hunk: unknown): HunkTarget {
  const line = vscode.window.activeTextEditor?.selection.active.line;
  return typeof hunk === 'number' ? { index: hunk } : line === undefined ? {} : { line };
}

export function registerReviewLenses(decisions: HunkDecisions, said: (text: string) => void): vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  // A deletion's side of the diff is an empty read-only document of the originals' scheme: its lenses go there.
  const lenses = vscode.languages.registerCodeLensProvider(
    [{ scheme: PROPOSED_SCHEME }, { scheme: ORIGINAL_SCHEME }],
    {
      onDidChangeCodeLenses: changed.event,
      provideCodeLenses: (document) => {
        const resource = resourceOf(document.uri);
        return (resource ? decisions.lenses(resource) : []).map(
          (lens) =>
            new vscode.CodeLens(new vscode.Range(lens.line, 0, lens.line, 0), {
              title: lens.title,
              command: lens.command,
              arguments: [document.uri, lens.hunk],
            }),
        );
      },
    },
  );
  const edits = vscode.workspace.onDidChangeTextDocument((event) => {
    if (event.document.uri.scheme === PROPOSED_SCHEME) changed.fire();
  });
  const nothingHere = 'There is no change of a toolgate proposal here (put the cursor in the proposal, on a changed line).';
  return vscode.Disposable.from(
    changed,
    lenses,
    edits,
    vscode.commands.registerCommand('toolgate.review.acceptHunk', (uri?: unknown, hunk?: unknown) => {
      const resource = targetOf(uri);
      if (!resource || !decisions.acceptHunk(resource, hunkTarget(hunk))) said(nothingHere);
      else changed.fire(); // nothing in the document changed: the lenses are told
    }),
    vscode.commands.registerCommand('toolgate.review.rejectHunk', async (uri?: unknown, hunk?: unknown) => {
      const resource = targetOf(uri);
      if (!resource || !(await decisions.rejectHunk(resource, hunkTarget(hunk)))) said(nothingHere);
    }),
    vscode.commands.registerCommand('toolgate.review.rejectFile', async (uri?: unknown) => {
      const resource = targetOf(uri);
      if (!resource || !(await decisions.rejectFile(resource))) {
        said('This file cannot be rejected on its own here (a new file or a deletion that is the review’s only file: reject the review).');
      }
      changed.fire(); // leaving a new file out edits no document: the lenses are told
    }),
    vscode.commands.registerCommand('toolgate.review.nextFile', async (uri?: unknown) => {
      const resource = targetOf(uri);
      if (!resource || !(await decisions.nextFile(resource))) said('Every file of this review is decided: accept or reject the review.');
    }),
    vscode.commands.registerCommand('toolgate.review.restoreFile', async (uri?: unknown) => {
      const resource = targetOf(uri);
      if (resource) await decisions.restoreFile(resource);
      changed.fire();
    }),
  );
}
