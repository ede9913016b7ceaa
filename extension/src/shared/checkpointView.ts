/**
 * Checkpoints as the chat shows them: which prompt a turn's checkpoints belong to, and the words of Restore… and
 * its outcome. Pure: no DOM, no Node, no `vscode` (the reducer in chatModel.ts and checkpoints.ts use it).
 */

import type { CheckpointsRestoreResult, FileChange, TurnInfo } from '../protocol';

/** What a prompt's turn left behind: Restore… goes back to `start`; `start` → `end` is the turn's diff. */
export interface TurnMark {
  start: string;
  end: string;
  /** The files the turn changed (Bash's included), relative to the workspace. */
  changed: string[];
}

export type RestoreWhat = 'code' | 'conversation' | 'both';

/** What undoes a restore: restoring the checkpoint it took first, the same way. */
export interface RestoreRedo {
  checkpoint: string;
  what: RestoreWhat;
}

/**
 * Each prompt gets the mark of its turn: `turns[i].prompt` counts the prompts of the chat (0 = the first). Items
 * whose mark is unchanged stay the same objects (the view redraws only what changed).
 */
export function markPrompts<I, P extends I & { turn?: TurnMark }>(
  items: readonly I[],
  turns: readonly TurnInfo[],
  isPrompt: (item: I) => item is P,
): I[] {
  const byPrompt = new Map<number, TurnInfo>();
  for (const turn of turns) if (turn.prompt !== null) byPrompt.set(turn.prompt, turn);
  let prompt = 0;
  return items.map((item) => {
    if (!isPrompt(item)) return item;
    const turn = byPrompt.get(prompt++);
    const next = turn ? { start: turn.start, end: turn.end, changed: turn.changed } : undefined;
    return sameMark(item.turn, next) ? item : { ...item, turn: next };
  });
}

function sameMark(a: TurnMark | undefined, b: TurnMark | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.start === b.start && a.end === b.end && a.changed.join('\0') === b.changed.join('\0');
}

/** "1 file changed", "3 files changed". */
export function filesChangedLabel(count: number): string {
  return `${count} ${count === 1 ? 'file' : 'files'} changed`;
}

export const RESTORE_CHOICES: readonly { what: RestoreWhat; label: string; detail: string }[] = [
  {
    what: 'code',
    label: 'Restore code',
    detail: 'Put the files back as they were before this message. The conversation stays as it is.',
  },
  {
    what: 'conversation',
    label: 'Restore conversation',
    detail: 'Cut the conversation back to before this message. The files stay as they are.',
  },
  { what: 'both', label: 'Restore code and conversation', detail: 'Both of the above.' },
];

/** The modal question before a restore, and its detail line. */
export function restoreQuestion(what: RestoreWhat, files: readonly FileChange[]): { message: string; detail: string } {
  const count = `${files.length} ${files.length === 1 ? 'file' : 'files'}`;
  const cut = 'The conversation is cut back to before this message.';
  const undo = 'Redo in the chat undoes it.';
  switch (what) {
    case 'code':
      return { message: `Restore ${count} to before this message?`, detail: `${fileList(files)}\n\n${undo}` };
    case 'conversation':
      return { message: 'Restore the conversation to before this message?', detail: `${cut} The files stay as they are. ${undo}` };
    case 'both':
      return { message: `Restore ${count} and the conversation to before this message?`, detail: `${fileList(files)}\n\n${cut} ${undo}` };
  }
}

const LISTED_FILES = 10;

function fileList(files: readonly FileChange[]): string {
  const shown = files.slice(0, LISTED_FILES).map((file) => `${file.path} (${ACTION_WORDS[file.action]})`);
  if (files.length > LISTED_FILES) shown.push(`and ${files.length - LISTED_FILES} more`);
  return shown.join('\n');
}

const ACTION_WORDS: Record<FileChange['action'], string> = { write: 'written back', remove: 'removed', link: 'link restored' };

/** The chat's notice after a restore; `redo` on it when the restore can be undone. */
export function restoreNotice(what: RestoreWhat | 'redo', result: CheckpointsRestoreResult): string {
  const files = `${result.files.length} ${result.files.length === 1 ? 'file' : 'files'}`;
  if (what === 'redo') return `Redone: ${files} back as they were before the restore.`;
  const conversation = result.entriesRemoved
    ? `the conversation cut back (${result.entriesRemoved} ${result.entriesRemoved === 1 ? 'entry' : 'entries'} removed)`
    : 'the conversation cut back';
  switch (what) {
    case 'code':
      return `Restored ${files} to before that message.`;
    case 'conversation':
      return `Restored: ${conversation}; the files are unchanged.`;
    case 'both':
      return `Restored ${files} and ${conversation}.`;
  }
}

/** Why a restore did not happen, in the person's words (the sidecar's reason says what to do). */
export function restoreRefusal(reason: string | null): string {
  const why = reason?.trim() || 'the sidecar gave no reason';
  return `Nothing was restored: ${why}${/[.!?…]$/.test(why) ? '' : '.'}`;
}

/** The address of a file at a checkpoint, for the checkpoint side of the diff views (checkpoints.ts). */
export interface CheckpointFileRef {
  sessionId: string;
  checkpointId: string;
  /** Relative to the workspace, as the sidecar names it. */
  path: string;
}

export const CHECKPOINT_SCHEME = 'toolgate-checkpoint';

/**
 * URI path and query for a checkpoint file. The path is where the file is on disk (`shownAs`), so the editor's
 * tab, language and the changes view's file name are the file's own; the query says which checkpoint and file.
 */
export function checkpointUriParts(ref: CheckpointFileRef, shownAs: string): { path: string; query: string } {
  const query = new URLSearchParams({ session: ref.sessionId, checkpoint: ref.checkpointId, path: ref.path }).toString();
  return { path: shownAs.startsWith('/') ? shownAs : `/${shownAs}`, query };
}

export function checkpointRefOf(query: string): CheckpointFileRef | undefined {
  const params = new URLSearchParams(query);
  const sessionId = params.get('session');
  const checkpointId = params.get('checkpoint');
  const path = params.get('path');
  return sessionId && checkpointId && path ? { sessionId, checkpointId, path } : undefined;
}
