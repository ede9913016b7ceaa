/**
 * The `vscode` calls of review notes: "Note for the Agent" on a line of a proposal under review asks for the note,
 * shows it as a comment (VS Code's comments API) on that line, and hands it to the review, which sends it to the
 * model with the decision (review/reviews.ts). Part of the thin wrapper; nothing else in here.
 */

import * as vscode from 'vscode';

import type { ResourceRef } from '../host';
import { activeEditorResource } from './vscodeApi';

export function registerReviewNotes(
  addNote: (resource: ResourceRef, line: number, text: string) => boolean,
  said: (text: string) => void,
): vscode.Disposable {
  const controller = vscode.comments.createCommentController('toolgate.reviewNotes', 'toolgate: notes for the agent');
  const threads: vscode.CommentThread[] = [];
  const command = vscode.commands.registerCommand('toolgate.review.addNote', async () => {
    const editor = vscode.window.activeTextEditor;
    const resource = activeEditorResource();
    const line = editor?.selection.active.line ?? 0;
    if (!editor || !resource) return said('Put the cursor on a line of a toolgate proposal under review, then add the note.');
    const text = await vscode.window.showInputBox({
      title: `Note for the agent on line ${line + 1}`,
      prompt: 'Sent to the agent with your Accept or Reject of this review',
    });
    if (!text?.trim()) return;
    if (!addNote(resource, line, text)) return said('This is not a toolgate proposal under review (it may have been answered already).');
    const comment: vscode.Comment = { body: text.trim(), mode: vscode.CommentMode.Preview, author: { name: 'You, to the agent' } };
    const thread = controller.createCommentThread(editor.document.uri, new vscode.Range(line, 0, line, 0), [comment]);
    thread.canReply = false;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    threads.push(thread);
  });
  // A review's tabs close when it is answered: its notes' threads go with them.
  const closing = vscode.workspace.onDidCloseTextDocument((document) => {
    for (const thread of threads.filter((candidate) => candidate.uri.toString() === document.uri.toString())) {
      thread.dispose();
      threads.splice(threads.indexOf(thread), 1);
    }
  });
  return vscode.Disposable.from(controller, command, closing, { dispose: () => threads.forEach((thread) => thread.dispose()) });
}
