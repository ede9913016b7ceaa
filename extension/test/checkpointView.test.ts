import { describe, expect, it } from 'vitest';

import type { TurnInfo } from '../src/protocol';
import type { ChatAction, ChatState } from '../src/shared/chatModel';
import { initialState, reduce } from '../src/shared/chatModel';
import {
  checkpointRefOf,
  checkpointUriParts,
  filesChangedLabel,
  restoreNotice,
  restoreQuestion,
} from '../src/shared/checkpointView';
import { parseViewMessage } from '../src/shared/messages';

const start = (): ChatState =>
  initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default');
const run = (actions: ChatAction[], state = start()): ChatState => actions.reduce(reduce, state);
const turn = (prompt: number | null, changed: string[] = []): TurnInfo => ({
  turn: prompt ?? 99,
  start: `00000${prompt ?? 9}0`,
  end: `00000${prompt ?? 9}1`,
  prompt,
  changed,
});

describe('checkpoints in the chat state', () => {
  it('marks each prompt with the turn of the same number, and leaves queued prompts and other items alone', () => {
    const state = run([
      { type: 'userMessage', text: 'first' },
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'ok' } },
      { type: 'userMessage', text: 'second' },
      { type: 'userMessage', text: 'typed while starting', queued: true },
      { type: 'checkpoints', turns: [turn(1, ['a.py', 'b.txt']), turn(0), turn(null)] },
    ]);
    const [first, reply, second, queued] = state.items;
    expect(first).toMatchObject({ kind: 'user', turn: { start: '0000000', end: '0000001', changed: [] } });
    expect(reply).not.toHaveProperty('turn');
    expect(second).toMatchObject({ kind: 'user', turn: { start: '0000010', changed: ['a.py', 'b.txt'] } });
    expect(queued).not.toHaveProperty('turn');
  });

  it('keeps an item the same object when its mark did not change (the view redraws only what changed)', () => {
    const marked = run([{ type: 'userMessage', text: 'first' }, { type: 'userMessage', text: 'second' }, { type: 'checkpoints', turns: [turn(0), turn(1)] }]);
    const again = reduce(marked, { type: 'checkpoints', turns: [turn(0), turn(1, ['x'])] });
    expect(again.items[0]).toBe(marked.items[0]);
    expect(again.items[1]).not.toBe(marked.items[1]);
    // A prompt whose point was cut away loses its Restore….
    const cut = reduce(again, { type: 'checkpoints', turns: [turn(0)] });
    expect(cut.items[1]).toMatchObject({ turn: undefined });
  });

  it('carries the redo of a restore on its notice', () => {
    const state = run([{ type: 'notice', level: 'info', text: 'Restored 2 files.', redo: { checkpoint: '0000042', what: 'code' } }]);
    expect(state.items[0]).toMatchObject({ kind: 'notice', redo: { checkpoint: '0000042', what: 'code' } });
    expect(run([{ type: 'notice', level: 'info', text: 'plain' }]).items[0]).not.toHaveProperty('redo');
  });
});

describe('checkpoint words', () => {
  it('counts files', () => {
    expect(filesChangedLabel(1)).toBe('1 file changed');
    expect(filesChangedLabel(2)).toBe('2 files changed');
  });

  it('names the number of files in the confirmation, and lists at most ten', () => {
    const files = Array.from({ length: 12 }, (_, index) => ({ path: `f${index}.txt`, action: 'write' as const }));
    const code = restoreQuestion('code', files);
    expect(code.message).toBe('Restore 12 files to before this message?');
    expect(code.detail).toContain('f9.txt (written back)');
    expect(code.detail).not.toContain('f10.txt');
    expect(code.detail).toContain('and 2 more');
    expect(restoreQuestion('both', [{ path: 'a', action: 'remove' }]).message).toBe(
      'Restore 1 file and the conversation to before this message?',
    );
    expect(restoreQuestion('conversation', []).detail).toContain('The files stay as they are.');
  });

  it('says what a restore did', () => {
    const result = { restored: true, reason: null, redo: '1', files: [{ path: 'a', action: 'write' as const }], conversationRestored: true, entriesRemoved: 3 };
    expect(restoreNotice('both', result)).toBe('Restored 1 file and the conversation cut back (3 entries removed).');
    expect(restoreNotice('code', { ...result, conversationRestored: false })).toBe('Restored 1 file to before that message.');
    expect(restoreNotice('redo', result)).toBe('Redone: 1 file back as they were before the restore.');
  });

  it('round-trips a checkpoint file address through a URI path and query, and refuses a broken one', () => {
    const ref = { sessionId: 's-1', checkpointId: '0000007', path: 'dir/a b&c.py' };
    const parts = checkpointUriParts(ref, '/ws/dir/a b&c.py');
    expect(parts.path).toBe('/ws/dir/a b&c.py');
    expect(checkpointRefOf(parts.query)).toEqual(ref);
    expect(checkpointUriParts(ref, 'dir/a b&c.py').path).toBe('/dir/a b&c.py');
    expect(checkpointRefOf('session=s-1&checkpoint=0000007')).toBeUndefined();
  });

  it('accepts the checkpoint buttons from the webview only with an item id', () => {
    expect(parseViewMessage({ type: 'restoreCheckpoint', itemId: 'i3' })).toEqual({ type: 'restoreCheckpoint', itemId: 'i3' });
    expect(parseViewMessage({ type: 'showTurnChanges', itemId: 'i3' })).toEqual({ type: 'showTurnChanges', itemId: 'i3' });
    expect(parseViewMessage({ type: 'redoRestore', itemId: 7 })).toBeUndefined();
    expect(parseViewMessage({ type: 'redoRestore' })).toBeUndefined();
  });
});
