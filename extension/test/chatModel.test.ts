import { describe, expect, it } from 'vitest';

import type { ChatAction, ChatState } from '../src/shared/chatModel';
import { TOOL_OUTPUT_CAP, formatDuration, initialState, reduce } from '../src/shared/chatModel';

const start = (): ChatState =>
  initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true }, 'default');

const run = (actions: ChatAction[], state = start()): ChatState => actions.reduce(reduce, state);

describe('chat state', () => {
  it('streams text deltas into one assistant message, finished by the next event', () => {
    const state = run([
      { type: 'userMessage', text: 'fix it' },
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'Look' } },
      { type: 'event', at: 2, event: { type: 'text_delta', text: 'ing…' } },
    ]);
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    expect(state.items[1]).toMatchObject({ text: 'Looking…', streaming: true });
    const after = run([{ type: 'event', at: 3, event: { type: 'tool_started', toolUseId: 't1', toolName: 'Read', summary: 'a.py' } }], state);
    expect(after.items[1]).toMatchObject({ streaming: false });
    const next = run([{ type: 'event', at: 4, event: { type: 'text_delta', text: 'Done.' } }], after);
    expect(next.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('follows a tool call from start through live output to its result and duration', () => {
    const state = run([
      { type: 'event', at: 1_000, event: { type: 'tool_started', toolUseId: 't1', toolName: 'Bash', summary: 'npm test' } },
      { type: 'toolProgress', toolUseId: 't1', text: 'PASS a\n' },
      { type: 'event', at: 1_500, event: { type: 'tool_progress', toolUseId: 't1', kind: 'stdout', text: 'PASS b\n' } },
      { type: 'event', at: 3_250, event: { type: 'tool_finished', toolUseId: 't1', isError: false, resultSummary: 'exit 0', result: 'ok' } },
    ]);
    expect(state.items[0]).toMatchObject({
      kind: 'tool',
      status: 'done',
      output: 'PASS a\nPASS b\n',
      resultSummary: 'exit 0',
      result: 'ok',
      startedAt: 1_000,
      finishedAt: 3_250,
    });
    expect(formatDuration(3_250 - 1_000)).toBe('2.3 s');
  });

  it('keeps only the tail of a long live output, and says it did', () => {
    const big = 'x'.repeat(TOOL_OUTPUT_CAP);
    const state = run([
      { type: 'event', at: 1, event: { type: 'tool_started', toolUseId: 't1', toolName: 'Bash', summary: 'yes' } },
      { type: 'toolProgress', toolUseId: 't1', text: big },
      { type: 'toolProgress', toolUseId: 't1', text: 'END' },
    ]);
    const tool = state.items[0];
    expect(tool?.kind === 'tool' && tool.output.length).toBe(TOOL_OUTPUT_CAP);
    expect(tool?.kind === 'tool' && tool.output.endsWith('END')).toBe(true);
    expect(tool?.kind === 'tool' && tool.outputTrimmed).toBe(true);
  });

  it('resolves an approval card once; a late second resolution changes nothing', () => {
    const state = run([
      { type: 'approvalRequested', id: 'a1', toolUseId: 't1', toolName: 'Bash', summary: 'rm x', reason: 'r', suggestions: [] },
      { type: 'approvalResolved', id: 'a1', state: 'denied', outcome: 'Denied.' },
      { type: 'approvalResolved', id: 'a1', state: 'cancelled', outcome: 'Withdrawn' },
    ]);
    expect(state.items[0]).toMatchObject({ state: 'denied', outcome: 'Denied.' });
  });

  it('replays a loaded session\'s events and clears the previous one', () => {
    const before = run([{ type: 'userMessage', text: 'old' }]);
    const state = run(
      [
        {
          type: 'sessionOpened',
          sessionId: 's2',
          mode: 'plan',
          at: 5,
          events: [
            { type: 'user_message', text: 'hello' },
            { type: 'text_delta', text: 'hi' },
            { type: 'todos', todos: [{ id: '1', content: 'write tests', status: 'in_progress' }] },
          ],
        },
      ],
      before,
    );
    expect(state.sessionId).toBe('s2');
    expect(state.mode).toBe('plan');
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    expect(state.items[1]).toMatchObject({ streaming: false });
    expect(state.todos).toHaveLength(1);
  });

  it('shows an error event as an error notice and ends streaming', () => {
    const state = run([
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'partial' } },
      { type: 'event', at: 2, event: { type: 'error', message: 'The API key was rejected.' } },
    ]);
    expect(state.items[0]).toMatchObject({ streaming: false });
    expect(state.items[1]).toMatchObject({ kind: 'notice', level: 'error', text: 'The API key was rejected.' });
  });

  it('gives every generated item a distinct id', () => {
    const state = run([
      { type: 'userMessage', text: 'a' },
      { type: 'notice', level: 'info', text: 'b' },
      { type: 'userMessage', text: 'c' },
    ]);
    expect(new Set(state.items.map((item) => item.id)).size).toBe(3);
  });
});
