import { describe, expect, it } from 'vitest';

import type { ChangedFile, ChangesHost } from '../src/checkpoints/checkpoints';
import { CheckpointController, isCheckpointMessage } from '../src/checkpoints/checkpoints';
import type { CheckpointsDiffResult, CheckpointsRestoreResult, TurnInfo } from '../src/protocol';
import type { Item } from '../src/shared/chatModel';
import { SidecarError } from '../src/sidecar/sidecarClient';
import { FakeNotifier, newStore, settle } from './fakes';

class FakeChanges implements ChangesHost {
  readonly opened: { title: string; files: readonly ChangedFile[] }[] = [];
  readonly diffs: string[] = [];
  readonly closed: string[] = [];
  hasChangesView = true;
  existing = new Set<string>();

  async showChanges(title: string, files: readonly ChangedFile[]): Promise<boolean> {
    if (!this.hasChangesView) return false;
    this.opened.push({ title, files });
    return true;
  }

  async showDiff(title: string): Promise<void> {
    this.diffs.push(title);
  }

  async closeChanges(title: string): Promise<void> {
    this.closed.push(title);
  }

  async fileExists(path: string): Promise<boolean> {
    return this.existing.has(path);
  }
}

const TURNS: TurnInfo[] = [{ turn: 1, start: '0000001', end: '0000004', prompt: 0, changed: ['a.py', 'made.txt'] }];

function setup(answers: { restore?: CheckpointsRestoreResult | Error; diff?: CheckpointsDiffResult | Error } = {}) {
  const store = newStore();
  const calls: { method: string; args: unknown[] }[] = [];
  const reloads: number[] = [];
  const logged: string[] = [];
  const answer = async <T>(value: T | Error): Promise<T> => {
    if (value instanceof Error) throw value;
    return value;
  };
  const client = {
    async listCheckpoints(sessionId: string) {
      calls.push({ method: 'list', args: [sessionId] });
      return { enabled: true, reason: null, checkpoints: [], turns: TURNS };
    },
    async checkpointDiff(...args: [string, string, string?]) {
      calls.push({ method: 'diff', args });
      return answer(answers.diff ?? { files: [{ path: 'a.py', action: 'write' as const }, { path: 'made.txt', action: 'remove' as const }], diff: '', unsaved: [] });
    },
    async checkpointFile(...args: [string, string, string]) {
      calls.push({ method: 'file', args });
      return { exists: true, content: `text of ${args[2]} at ${args[1]}`, binary: args[2].endsWith('.png') };
    },
    async restoreCheckpoint(...args: [string, string, 'code' | 'conversation' | 'both']) {
      calls.push({ method: 'restore', args });
      return answer(
        answers.restore ?? { restored: true, reason: null, redo: '0000009', files: [{ path: 'a.py', action: 'write' as const }, { path: 'made.txt', action: 'remove' as const }], conversationRestored: args[2] !== 'code', entriesRemoved: null },
      );
    },
  };
  const notifier = new FakeNotifier();
  const changes = new FakeChanges();
  changes.existing.add('/ws/a.py').add('/ws/made.txt');
  const checkpoints = new CheckpointController({
    store,
    client,
    notifier,
    changes,
    workspaceRoot: () => '/ws',
    reloadSession: async () => {
      reloads.push(1);
    },
    log: (line) => logged.push(line),
  });
  return { store, calls, reloads, logged, notifier, changes, checkpoints };
}

/** A session with one finished turn whose prompt is marked. */
async function withTurn(context: ReturnType<typeof setup>): Promise<Extract<Item, { kind: 'user' }>> {
  context.store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
  context.store.dispatch({ type: 'userMessage', text: 'make the change' });
  context.store.dispatch({ type: 'busy', busy: true });
  context.store.dispatch({ type: 'busy', busy: false });
  await settle();
  const prompt = context.store.state.items.find((item) => item.kind === 'user');
  if (prompt?.kind !== 'user' || !prompt.turn) throw new Error('the prompt was not marked');
  return prompt;
}

const notices = (context: ReturnType<typeof setup>) =>
  context.store.state.items.filter((item): item is Extract<Item, { kind: 'notice' }> => item.kind === 'notice');

describe('checkpoints in the chat', () => {
  it('marks the prompts once a turn ends, not while it runs', async () => {
    const context = setup();
    context.store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    context.store.dispatch({ type: 'userMessage', text: 'go' });
    context.store.dispatch({ type: 'busy', busy: true });
    await settle();
    const before = context.calls.length;
    context.store.dispatch({ type: 'toolProgress', toolUseId: 'x', text: '' });
    await settle();
    expect(context.calls.length).toBe(before);
    context.store.dispatch({ type: 'busy', busy: false });
    await settle();
    expect(context.store.state.items[0]).toMatchObject({ turn: { start: '0000001', changed: ['a.py', 'made.txt'] } });
  });

  it('restores code: a choice, the diff (now ↔ the checkpoint) in the changes view, a confirmation, then Redo', async () => {
    const context = setup();
    const prompt = await withTurn(context);
    context.notifier.pickAnswers = ['Restore code'];
    await context.checkpoints.viewMessage({ type: 'restoreCheckpoint', itemId: prompt.id });
    expect(context.notifier.picks[0]?.labels).toEqual(['Restore code', 'Restore conversation', 'Restore code and conversation']);
    expect(context.calls.find((call) => call.method === 'diff')?.args).toEqual(['s1', '0000001']);
    const [view] = context.changes.opened;
    expect(view?.title).toBe('Restore: now ↔ before "make the change"');
    expect(view?.files).toEqual([
      {
        path: 'a.py',
        onDisk: '/ws/a.py',
        original: { file: '/ws/a.py' },
        modified: { checkpoint: { sessionId: 's1', checkpointId: '0000001', path: 'a.py' }, shownAs: '/ws/a.py' },
      },
      { path: 'made.txt', onDisk: '/ws/made.txt', original: { file: '/ws/made.txt' }, modified: null },
    ]);
    expect(context.calls.find((call) => call.method === 'restore')?.args).toEqual(['s1', '0000001', 'code']);
    expect(context.changes.closed).toEqual(['Restore: now ↔ before "make the change"']); // the preview is stale now
    expect(context.reloads).toEqual([]);
    const [done] = notices(context);
    expect(done).toMatchObject({ text: 'Restored 2 files to before that message.', redo: { checkpoint: '0000009', what: 'code' } });

    await context.checkpoints.viewMessage({ type: 'redoRestore', itemId: done!.id });
    expect(context.calls.filter((call) => call.method === 'restore').at(-1)?.args).toEqual(['s1', '0000009', 'code']);
    expect(notices(context).at(-1)).toMatchObject({ text: 'Redone: 2 files back as they were before the restore.' });
    expect(notices(context).at(-1)).not.toHaveProperty('redo');
  });

  it('restores nothing when the confirmation is declined, or the pick is dismissed', async () => {
    const context = setup();
    const prompt = await withTurn(context);
    context.notifier.confirmAnswer = false;
    context.notifier.pickAnswers = ['Restore code and conversation', undefined];
    await context.checkpoints.restore(prompt.id);
    await context.checkpoints.restore(prompt.id);
    expect(context.calls.some((call) => call.method === 'restore')).toBe(false);
    expect(context.changes.opened).toHaveLength(1);
    expect(context.changes.closed).toEqual([]); // a person who said no may still be reading the preview
  });

  it('restores the conversation without a diff, and draws the session again', async () => {
    const context = setup();
    const prompt = await withTurn(context);
    context.notifier.pickAnswers = ['Restore conversation'];
    await context.checkpoints.restore(prompt.id);
    expect(context.changes.opened).toEqual([]);
    expect(context.calls.some((call) => call.method === 'diff')).toBe(false);
    expect(context.calls.find((call) => call.method === 'restore')?.args).toEqual(['s1', '0000001', 'conversation']);
    expect(context.reloads).toEqual([1]);
    expect(notices(context).at(-1)?.redo).toEqual({ checkpoint: '0000009', what: 'conversation' });
  });

  it("shows the sidecar's refusal in the chat (unsaved editor changes, a turn running, an unknown checkpoint)", async () => {
    const refusal = 'a.py has unsaved changes in the editor: save or revert them, then restore again';
    const context = setup({ restore: { restored: false, reason: refusal, redo: null, files: [], conversationRestored: false, entriesRemoved: null } });
    const prompt = await withTurn(context);
    context.notifier.pickAnswers = ['Restore code'];
    await context.checkpoints.restore(prompt.id);
    expect(notices(context).at(-1)).toMatchObject({ level: 'error', text: `Nothing was restored: ${refusal}.` });
    expect(context.changes.closed).toEqual([]); // nothing changed: the preview still shows what a restore would do

    const unknown = setup({ diff: new SidecarError('toolgate/checkpoints/diff', 'failed', -32602, 'There is no checkpoint 0000001 in this session.') });
    const other = await withTurn(unknown);
    unknown.notifier.pickAnswers = ['Restore code'];
    await unknown.checkpoints.restore(other.id);
    expect(notices(unknown).at(-1)).toMatchObject({ level: 'error', text: 'Nothing was restored: There is no checkpoint 0000001 in this session.' });
    expect(unknown.calls.some((call) => call.method === 'restore')).toBe(false);
  });

  it('says which files have unsaved editor changes before any preview or question, and restores nothing', async () => {
    const files = [{ path: 'a.py', action: 'write' as const }, { path: 'made.txt', action: 'remove' as const }];
    const context = setup({ diff: { files, diff: '', unsaved: ['a.py'] } });
    const prompt = await withTurn(context);
    context.notifier.pickAnswers = ['Restore code and conversation'];
    await context.checkpoints.restore(prompt.id);
    expect(notices(context).at(-1)).toMatchObject({
      level: 'warning',
      text: 'Nothing was restored: a.py has unsaved changes in the editor, and restoring would overwrite them. Save or revert them, then use Restore… again.',
    });
    expect(context.changes.opened).toEqual([]);
    expect(context.calls.some((call) => call.method === 'restore')).toBe(false);
  });

  it('asks nothing while a turn runs, and says so', async () => {
    const context = setup();
    const prompt = await withTurn(context);
    context.store.dispatch({ type: 'busy', busy: true });
    await context.checkpoints.restore(prompt.id);
    expect(context.notifier.picks).toEqual([]);
    expect(notices(context).at(-1)?.text).toMatch(/^A turn is running/);
  });

  it('says there is nothing to restore when the files are as they were', async () => {
    const context = setup({ diff: { files: [], diff: '', unsaved: [] } });
    const prompt = await withTurn(context);
    context.notifier.pickAnswers = ['Restore code'];
    await context.checkpoints.restore(prompt.id);
    expect(context.calls.some((call) => call.method === 'restore')).toBe(false);
    expect(notices(context).at(-1)?.text).toMatch(/nothing to restore/);
  });

  it("opens a turn's changes from its first checkpoint to its last, file by file where there is no changes view", async () => {
    const context = setup();
    const prompt = await withTurn(context);
    await context.checkpoints.viewMessage({ type: 'showTurnChanges', itemId: prompt.id });
    expect(context.calls.find((call) => call.method === 'diff')?.args).toEqual(['s1', '0000001', '0000004']);
    expect(context.changes.opened[0]?.files[0]).toEqual({
      path: 'a.py',
      onDisk: '/ws/a.py',
      original: { checkpoint: { sessionId: 's1', checkpointId: '0000001', path: 'a.py' }, shownAs: '/ws/a.py' },
      modified: { checkpoint: { sessionId: 's1', checkpointId: '0000004', path: 'a.py' }, shownAs: '/ws/a.py' },
    });
    context.changes.hasChangesView = false;
    context.notifier.pickAnswers = ['made.txt'];
    await context.checkpoints.showTurn(prompt.id);
    expect(context.changes.diffs).toEqual(['Changes of "make the change": made.txt']);
  });

  it('gives the diff views the text at a checkpoint, and says when it cannot', async () => {
    const context = setup();
    expect(await context.checkpoints.fileText({ sessionId: 's1', checkpointId: '0000001', path: 'a.py' })).toBe('text of a.py at 0000001');
    expect(await context.checkpoints.fileText({ sessionId: 's1', checkpointId: '0000001', path: 'logo.png' })).toMatch(/binary file/);
    expect(await context.checkpoints.fileText(undefined)).toBe('');
  });

  it('routes only its own messages', () => {
    expect(isCheckpointMessage({ type: 'redoRestore', itemId: 'i1' })).toBe(true);
    expect(isCheckpointMessage({ type: 'send', text: 'x' })).toBe(false);
  });
});
