import { describe, expect, it } from 'vitest';

import { ChangesBarController } from '../src/checkpoints/changesBar';
import type { ChangedFile } from '../src/checkpoints/checkpoints';
import type { ChangedFileInfo, ChangesUndoResult, HunkInfo } from '../src/protocol';
import { barFiles, changesSummary, fileCounts, reduceChangesBar, undoNotice } from '../src/shared/changesBar';
import { parseViewMessage } from '../src/shared/messages';
import { newStore, settle } from './fakes';

const HUNKS: HunkInfo[] = [
  { oldStart: 1, oldLines: ['b\n'], newStart: 1, newLines: ['B\n'], before: ['a\n'], after: ['c\n'] },
  { oldStart: 5, oldLines: [], newStart: 5, newLines: ['added one\n', 'added two\n'], before: ['e\n'], after: [] },
];

function file(path: string, extra: Partial<ChangedFileInfo> = {}): ChangedFileInfo {
  return { path, status: 'modified', added: 3, removed: 1, hunks: HUNKS, conflict: null, version: `v-${path}`, ...extra };
}

const UNDONE: ChangesUndoResult = { undone: true, reason: null, redo: '000009', files: ['a.py'], conflicts: [] };

function setup(listings: ChangedFileInfo[][], undo: ChangesUndoResult = UNDONE) {
  const store = newStore();
  const calls: { method: string; args: unknown[] }[] = [];
  const diffs: { title: string; file: ChangedFile }[] = [];
  let listed = 0;
  const listing = () => ({ enabled: true, reason: null, since: '000001', files: listings[Math.min(listed++, listings.length - 1)] ?? [], notUndoable: [] });
  const client = {
    async listChanges(sessionId: string) {
      calls.push({ method: 'list', args: [sessionId] });
      return listing();
    },
    async keepChange(...args: [string, string, HunkInfo?]) {
      calls.push({ method: 'keep', args });
      return listing();
    },
    async undoChange(...args: [string, { path?: string; hunk?: HunkInfo; takeUndo?: boolean }]) {
      calls.push({ method: 'undo', args });
      return undo;
    },
    async changesWithout(...args: [string, string]) {
      calls.push({ method: 'without', args });
      return { exists: true, content: 'old text', binary: false };
    },
    async restoreCheckpoint(...args: [string, string, 'code' | 'conversation' | 'both']) {
      calls.push({ method: 'restore', args });
      return { restored: true, reason: null, redo: '000010', files: [{ path: 'a.py', action: 'write' as const }], conversationRestored: false, entriesRemoved: null };
    },
  };
  const changes = {
    async showDiff(title: string, changed: ChangedFile) {
      diffs.push({ title, file: changed });
    },
  };
  let fileChanged: (fsPath: string) => void = () => undefined;
  const bar = new ChangesBarController({
    store,
    client,
    changes,
    workspaceRoot: () => '/ws/',
    onFileChanged: (listener) => {
      fileChanged = listener;
    },
    log: () => undefined,
  });
  store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
  return { store, calls, diffs, bar, changeOnDisk: (fsPath: string) => fileChanged(fsPath) };
}

describe('the changes bar model', () => {
  it('counts files and lines, and names what a file without line counts is', () => {
    const files = barFiles([file('a.py'), file('b.bin', { hunks: [], added: 0, removed: 0 }), file('c.py', { conflict: 'edited since', hunks: [] })]);
    expect(changesSummary(files)).toBe('3 files changed +3 −1 · 1 conflict'); // a conflict's lines are not counted
    expect(changesSummary(files.slice(0, 1))).toBe('1 file changed +3 −1');
    expect(changesSummary(files.slice(2))).toBe('1 file changed · 1 conflict'); // not "+0 −0"
    expect(files[0]?.hunks).toEqual([
      { line: 2, added: 1, removed: 1, preview: 'B' },
      { line: 6, added: 2, removed: 0, preview: 'added one' },
    ]);
    expect(files.map(fileCounts)).toEqual(['+3 −1', 'binary', 'conflict']);
  });

  it('says what an undo did, offers Redo, and keeps a conflict until it is settled', () => {
    const notice = undoNotice({ ...UNDONE, files: ['a.py', 'b.py'], reason: '1 file(s) were left', conflicts: [{ path: 'c.py', reason: 'same lines' }] }, 'the agent’s changes');
    expect(notice).toEqual({ level: 'warning', text: 'Undid the agent’s changes in 2 files. 1 file(s) were left.', redo: '000009', conflicts: ['c.py'] });
    const still = reduceChangesBar({ files: [], notice }, { type: 'changesListed', files: barFiles([file('c.py', { conflict: 'same lines', hunks: [] })]) });
    expect(still.notice?.conflicts).toEqual(['c.py']);
    const settled = reduceChangesBar(still, { type: 'changesListed', files: [] });
    expect(settled.notice?.conflicts).toEqual([]);
    expect(undoNotice({ undone: false, reason: 'a turn is running', redo: null, files: [], conflicts: [] }, 'x')).toEqual({
      level: 'error',
      text: 'Nothing was undone: a turn is running.',
    });
  });

  it('accepts only well-formed bar messages from the view', () => {
    expect(parseViewMessage({ type: 'changes', op: 'undo', path: 'a.py', version: 'v', hunk: 1 })).toEqual({ type: 'changes', op: 'undo', path: 'a.py', version: 'v', hunk: 1 });
    expect(parseViewMessage({ type: 'changes', op: 'undoAll' })).toEqual({ type: 'changes', op: 'undoAll' });
    expect(parseViewMessage({ type: 'changes', op: 'rm -rf' })).toBeUndefined();
    expect(parseViewMessage({ type: 'changes', op: 'undo', hunk: -1 })).toBeUndefined();
    expect(parseViewMessage({ type: 'changes', op: 'undo', path: 7 })).toBeUndefined();
  });
});

describe('the changes bar controller', () => {
  it('lists after each call and each turn, and draws the bar from it', async () => {
    const context = setup([[file('a.py')]]);
    await settle();
    expect(context.store.state.changes.files.map((f) => f.path)).toEqual(['a.py']);
    context.store.dispatch({ type: 'busy', busy: true });
    context.store.dispatch({ type: 'event', event: { type: 'tool_call_finished', toolUseId: 't1', isError: false, content: '' } as never, at: 0 });
    await settle();
    expect(context.calls.filter((c) => c.method === 'list')).toHaveLength(2);
  });

  it('lists again when the person changes a listed file on disk between turns, and only then', async () => {
    const context = setup([[file('src/a.py')], [file('src/a.py', { conflict: 'changed where the agent did' })]]);
    await settle();
    const listings = () => context.calls.filter((c) => c.method === 'list').length;
    expect(listings()).toBe(1);
    context.changeOnDisk('/ws/src/other.py'); // not in the bar
    context.changeOnDisk('/elsewhere/src/a.py'); // same name, another folder
    await settle();
    expect(listings()).toBe(1);
    context.store.dispatch({ type: 'busy', busy: true });
    context.changeOnDisk('/ws/src/a.py'); // the agent's own write mid-turn: the call's end lists again
    await settle();
    expect(listings()).toBe(1);
    context.store.dispatch({ type: 'busy', busy: false });
    await settle();
    expect(listings()).toBe(2);
    context.changeOnDisk('/ws/src/a.py'); // the person's edit after the turn
    await settle();
    expect(listings()).toBe(3);
    expect(context.store.state.changes.files[0]?.conflict).toBeTruthy();
  });

  it('lists once more after a burst of calls, not once per call', async () => {
    const context = setup([[file('a.py')]]);
    await settle();
    const finished = { type: 'event' as const, event: { type: 'tool_call_finished', toolUseId: 't', isError: false, content: '' } as never, at: 0 };
    for (let i = 0; i < 5; i++) context.store.dispatch(finished);
    await settle();
    await settle();
    expect(context.calls.filter((c) => c.method === 'list')).toHaveLength(3); // the session's, the burst's first, one more
  });

  it('undoes one hunk by the hunk the sidecar listed, and says so in the bar with Redo', async () => {
    const context = setup([[file('a.py')], []]);
    await settle();
    await context.bar.viewMessage({ type: 'changes', op: 'undo', path: 'a.py', version: 'v-a.py', hunk: 1 });
    expect(context.calls.find((c) => c.method === 'undo')?.args).toEqual(['s1', { path: 'a.py', hunk: HUNKS[1] }]);
    expect(context.store.state.changes.notice).toMatchObject({ level: 'info', redo: '000009' });
    expect(context.store.state.items.filter((item) => item.kind === 'notice')).toEqual([]); // not in the transcript

    await context.bar.viewMessage({ type: 'changes', op: 'redo' });
    expect(context.calls.find((c) => c.method === 'restore')?.args).toEqual(['s1', '000009', 'code']);
  });

  it('refuses a click on a file drawn at another version, and lists again', async () => {
    const context = setup([[file('a.py')]]);
    await settle();
    await context.bar.viewMessage({ type: 'changes', op: 'undo', path: 'a.py', version: 'older' });
    expect(context.calls.some((c) => c.method === 'undo')).toBe(false);
    expect(context.store.state.changes.notice?.text).toContain('changed since the bar was drawn');
  });

  it('keeps a file or a hunk without undoing anything', async () => {
    const context = setup([[file('a.py')], [file('a.py', { hunks: [HUNKS[1] as HunkInfo] })], []]);
    await settle();
    await context.bar.viewMessage({ type: 'changes', op: 'keep', path: 'a.py', version: 'v-a.py', hunk: 0 });
    expect(context.calls.find((c) => c.method === 'keep')?.args).toEqual(['s1', 'a.py', HUNKS[0]]);
    expect(context.store.state.changes.files[0]?.hunks).toHaveLength(1);
    await context.bar.viewMessage({ type: 'changes', op: 'keep', path: 'a.py', version: 'v-a.py' });
    expect(context.store.state.changes.files).toEqual([]);
    expect(context.calls.some((c) => c.method === 'undo')).toBe(false);
  });

  it('opens a file as the agent’s changes: without them on the left, the file on the right', async () => {
    const context = setup([[file('a.py'), file('new.py', { status: 'created' })]]);
    await settle();
    await context.bar.viewMessage({ type: 'changes', op: 'open', path: 'a.py', version: 'v-a.py' });
    await context.bar.viewMessage({ type: 'changes', op: 'open', path: 'new.py', version: 'v-new.py' });
    expect(context.diffs.map((d) => [d.title, d.file.original, d.file.modified])).toEqual([
      ['Agent’s changes: a.py', { without: { sessionId: 's1', path: 'a.py' }, shownAs: '/ws/a.py' }, { file: '/ws/a.py' }],
      ['Agent’s changes: new.py', null, { file: '/ws/new.py' }],
    ]);
    expect(await context.bar.withoutText({ sessionId: 's1', path: 'a.py' })).toBe('old text');
  });
});
