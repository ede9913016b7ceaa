/**
 * The changes bar above the composer: the agent's changes of the last turns as the sidecar lists them
 * (`toolgate/changes/list`), file by file and hunk by hunk, and the notice of the last Keep/Undo, shown in the
 * bar where the person is looking. Pure: no DOM, no Node, no `vscode` (chatModel.ts, the webview and
 * checkpoints/changesBar.ts use it).
 */

import type { ChangedFileInfo, ChangesUndoResult } from '../protocol';

export interface BarHunk {
  /** Where the change is in the file now (1-based). */
  line: number;
  added: number;
  removed: number;
  /** Its first changed line, shortened, so that a hunk can be told apart without opening the file. */
  preview: string;
}

export interface BarFile {
  path: string;
  status: 'created' | 'removed' | 'modified';
  added: number;
  removed: number;
  /** Names the file's content when listed: a message about a file carries it, so a stale click is refused. */
  version: string;
  /** Why the agent's change cannot be taken out as the file is now (the person edited the same lines). */
  conflict: string | null;
  hunks: BarHunk[];
}

export interface BarNotice {
  level: 'info' | 'warning' | 'error';
  text: string;
  /** The checkpoint that takes the undo back (Redo in the bar). */
  redo?: string;
  /** Files left as they were because of a conflict: each offers keep mine, take the undo, open a merge. */
  conflicts?: string[];
}

export interface ChangesBar {
  files: BarFile[];
  notice: BarNotice | null;
}

export type ChangesBarAction =
  | { type: 'changesListed'; files: BarFile[] }
  | { type: 'changesNotice'; notice: BarNotice | null };

/** What a bar button asks for; `path` and `version` name the file, `hunk` its index in the listing. */
export type ChangesOp = 'open' | 'keep' | 'undo' | 'keepAll' | 'undoAll' | 'redo' | 'takeUndo' | 'merge' | 'dismiss';
export const CHANGES_OPS: readonly ChangesOp[] = ['open', 'keep', 'undo', 'keepAll', 'undoAll', 'redo', 'takeUndo', 'merge', 'dismiss'];

export const EMPTY_BAR: ChangesBar = { files: [], notice: null };

export function isChangesBarAction(action: { type: string }): action is ChangesBarAction {
  return action.type === 'changesListed' || action.type === 'changesNotice';
}

export function reduceChangesBar(bar: ChangesBar, action: ChangesBarAction): ChangesBar {
  switch (action.type) {
    case 'changesListed': {
      // A conflict the person settled (kept, undone, merged by hand) leaves the notice's choices.
      const listed = new Set(action.files.filter((file) => file.conflict !== null).map((file) => file.path));
      const conflicts = bar.notice?.conflicts?.filter((path) => listed.has(path));
      const notice = bar.notice && conflicts ? { ...bar.notice, conflicts } : bar.notice;
      return { files: action.files, notice };
    }
    case 'changesNotice':
      return { ...bar, notice: action.notice };
  }
}

export function barFiles(listed: readonly ChangedFileInfo[]): BarFile[] {
  return listed.map((file) => ({
    path: file.path,
    status: file.status,
    added: file.added,
    removed: file.removed,
    version: file.version,
    conflict: file.conflict ?? null,
    hunks: file.hunks.map((hunk) => ({
      line: hunk.newStart + 1,
      added: hunk.newLines.length,
      removed: hunk.oldLines.length,
      preview: shorten((hunk.newLines[0] ?? hunk.oldLines[0] ?? '').trim()),
    })),
  }));
}

/** "2 files changed +12 −3", and how many are conflicts (their lines are not counted: they have no hunks). */
export function changesSummary(files: readonly BarFile[]): string {
  // Lines are counted where a file's row shows them: a conflict, a binary, created or removed file shows none, and a
  // bar of only such files says no "+0 −0" it does not mean.
  const counted = files.filter((file) => file.conflict === null && file.hunks.length > 0);
  const added = counted.reduce((sum, file) => sum + file.added, 0);
  const removed = counted.reduce((sum, file) => sum + file.removed, 0);
  const conflicts = files.filter((file) => file.conflict !== null).length;
  const lines = counted.length > 0 ? ` +${added} −${removed}` : '';
  const summary = `${files.length} ${files.length === 1 ? 'file' : 'files'} changed${lines}`;
  return conflicts > 0 ? `${summary} · ${conflicts} ${conflicts === 1 ? 'conflict' : 'conflicts'}` : summary;
}

/** "+2 −1", or what a file without line counts is (created, removed, binary). */
export function fileCounts(file: BarFile): string {
  if (file.conflict !== null) return 'conflict';
  if (file.hunks.length === 0) return file.status === 'modified' ? 'binary' : file.status;
  return `+${file.added} −${file.removed}`;
}

/** What the bar says after an undo. */
export function undoNotice(result: ChangesUndoResult, what: string): BarNotice {
  const conflicts = result.conflicts.map((conflict) => conflict.path);
  if (!result.undone) {
    return {
      level: conflicts.length > 0 ? 'warning' : 'error',
      text: sentence(`Nothing was undone: ${result.reason ?? 'the sidecar gave no reason'}`),
      ...(conflicts.length > 0 ? { conflicts } : {}),
    };
  }
  const named = result.files.length === 1 ? result.files[0] : `${result.files.length} files`;
  const text = `Undid ${what} in ${named}.` + (result.reason ? ` ${result.reason}.` : '');
  return {
    level: conflicts.length > 0 ? 'warning' : 'info',
    text,
    ...(result.redo ? { redo: result.redo } : {}),
    ...(conflicts.length > 0 ? { conflicts } : {}),
  };
}

/** The sidecar's reasons are clauses: the bar shows each as a sentence. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function shorten(line: string): string {
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** The "without the agent's changes" side of a file's diff from the bar: a document of its own scheme. */
export const WITHOUT_SCHEME = 'toolgate-without';

export interface WithoutRef {
  sessionId: string;
  /** As the sidecar names it (relative to the workspace). */
  path: string;
}

/** URI path and query: the path is the file's own (its tab, its language), the query which session and file. */
export function withoutUriParts(ref: WithoutRef, shownAs: string): { path: string; query: string } {
  const query = new URLSearchParams({ session: ref.sessionId, path: ref.path }).toString();
  return { path: shownAs.startsWith('/') ? shownAs : `/${shownAs}`, query };
}

export function withoutRefOf(query: string): WithoutRef | undefined {
  const params = new URLSearchParams(query);
  const sessionId = params.get('session');
  const path = params.get('path');
  return sessionId && path ? { sessionId, path } : undefined;
}
