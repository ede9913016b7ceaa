import { describe, expect, it } from 'vitest';

import type { ApprovalRecord, ChatMessage, ReviewRecord, ToolResult } from '../src/protocol';
import type { ChatAction, ChatState, Item } from '../src/shared/chatModel';
import { initialState, reduce } from '../src/shared/chatModel';
import { ACCEPTED_EDITS, ACCEPT_EDITS_ON } from '../src/shared/outcomes';

const start = (): ChatState => ({
  ...initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default'),
  sessions: [{ sessionId: 's1', workspace: '/ws', mode: 'default', reviewEdits: 'when_asking', title: 't' } as never],
  sessionId: 's1',
});
const run = (actions: ChatAction[], state = start()): ChatState => actions.reduce(reduce, state);

/** What the person sees of an item: ids, clocks and live output are the only things history cannot repeat. */
function seen(items: readonly Item[]): unknown[] {
  return items.map((item) => {
    const { id: _id, ...rest } = item;
    if (rest.kind === 'tool') return { ...rest, startedAt: 0, finishedAt: 0, output: '', outputTrimmed: false };
    // A replayed card has what the record keeps; the suggested rules and "accept edits" were the waiting request's.
    if (rest.kind === 'approval') {
      const { suggestions: _suggestions, offersAcceptEdits: _offers, ...recorded } = rest.card;
      return { ...rest, card: recorded };
    }
    return rest;
  });
}

const bashResult: ToolResult = { type: 'tool_result', tool_use_id: 'b1', content: 'The user denied this call.', is_error: true };
const editResult: ToolResult = { type: 'tool_result', tool_use_id: 'e1', content: 'Edited a.py', is_error: false };
const todoResult: ToolResult = { type: 'tool_result', tool_use_id: 'w1', content: 'Todos updated', is_error: false };
const todoInput = { todos: [{ id: '1', content: 'fix it', status: 'in_progress' }] };
const todos = [{ id: '1', content: 'fix it', status: 'in_progress' as const }];

/** One turn as the live events drew it: a denied Bash call, an Edit accepted with edits, a todo update. */
const live: ChatAction[] = [
  { type: 'userMessage', text: 'fix the bug' },
  { type: 'event', at: 1, event: { type: 'text_delta', text: 'Let me ' } },
  { type: 'event', at: 2, event: { type: 'text_delta', text: 'look.' } },
  { type: 'event', at: 3, event: { type: 'tool_call_started', tool_use_id: 'w1', name: 'TodoWrite', input: todoInput, summary: 'Update 1 todo' } },
  { type: 'event', at: 3, event: { type: 'tool_call_started', tool_use_id: 'b1', name: 'Bash', input: { command: 'rm -rf build' }, summary: 'rm -rf build' } },
  { type: 'event', at: 3, event: { type: 'tool_call_started', tool_use_id: 'e1', name: 'Edit', input: { file_path: '/ws/a.py' }, summary: 'Edit a.py' } },
  { type: 'event', at: 4, event: { type: 'todo_update', todos } },
  { type: 'event', at: 4, event: { type: 'tool_call_finished', tool_use_id: 'w1', name: 'TodoWrite', is_error: false, summary: 'Todos updated', result: todoResult } },
  { type: 'approvalRequested', id: 'a1', card: { toolUseId: 'b1', toolName: 'Bash', summary: 'rm -rf build', reason: 'Deletes files.', suggestions: [{ rule: 'Bash(rm:*)', scope: 'local' }] } },
  { type: 'approvalResolved', id: 'a1', state: 'denied', outcome: 'Denied, with feedback: use make clean' },
  { type: 'event', at: 5, event: { type: 'tool_call_finished', tool_use_id: 'b1', name: 'Bash', is_error: true, summary: 'The user denied this call.', result: bashResult } },
  { type: 'reviewRequested', id: 'r1', toolUseId: 'e1', title: 'Edit a.py', reason: 'Edits need approval.', files: [{ path: '/ws/a.py', label: 'a.py', change: 'modify' }] },
  { type: 'reviewResolved', id: 'r1', state: 'accepted', outcome: 'Accepted with your edits to a.py.' },
  { type: 'event', at: 6, event: { type: 'tool_call_finished', tool_use_id: 'e1', name: 'Edit', is_error: false, summary: 'Edited a.py', result: editResult } },
  { type: 'event', at: 7, event: { type: 'text_delta', text: 'Done.' } },
  { type: 'busy', busy: false },
];

const messages: ChatMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'fix the bug' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'w1', name: 'TodoWrite', input: todoInput },
      { type: 'tool_use', id: 'b1', name: 'Bash', input: { command: 'rm -rf build' } },
      { type: 'tool_use', id: 'e1', name: 'Edit', input: { file_path: '/ws/a.py' } },
    ],
  },
  { role: 'user', content: [todoResult, bashResult, editResult] },
  { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
];

const approval: ApprovalRecord = {
  kind: 'approval', tool_use_id: 'b1', tool_name: 'Bash', summary: 'rm -rf build', reason: 'Deletes files.',
  answered_by: 'user', decision: 'deny', feedback: 'use make clean', saved_rule: null, accepted_edits: false,
};
const review: ReviewRecord = {
  kind: 'review', tool_use_id: 'e1', tool_name: 'Edit', title: 'Edit a.py', reason: 'Edits need approval.',
  files: [{ path: '/ws/a.py', change: 'modify' }], answered_by: 'user', decision: 'accept', feedback: null, edited: ['/ws/a.py'], skipped: [], accepted_edits: false,
};
const calls = {
  w1: { summary: 'Update 1 todo', result_summary: 'Todos updated' },
  b1: { summary: 'rm -rf build', result_summary: 'The user denied this call.' },
  e1: { summary: 'Edit a.py', result_summary: 'Edited a.py' },
};

const reopen = (extra: Partial<Extract<ChatAction, { type: 'sessionOpened' }>> = {}): ChatState =>
  run([{ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages, todos, busy: false, ...extra }]);

describe('a reopened session', () => {
  it('draws the same cards, outcomes and todos as the live turn did', () => {
    const drawnLive = run(live);
    const drawnAgain = reopen({ decisions: [approval, review], calls });
    expect(seen(drawnAgain.items)).toEqual(seen(drawnLive.items));
    expect(drawnAgain.todos).toEqual(drawnLive.todos);
    expect(drawnAgain.items.find((item) => item.kind === 'review')).toMatchObject({ outcome: 'Accepted with your edits to a.py.' });
  });

  it('shows a prompt with attachments as the prompt alone, as it was drawn live', () => {
    const withAttachment: ChatMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'explain @a.py' },
          { type: 'text', text: 'The person attached a.py, the whole file:\n1\tx = 1' },
        ],
      },
    ];
    const state = reopen({ messages: withAttachment, todos: [] });
    expect(state.items.map((item) => (item.kind === 'user' ? item.text : item.kind))).toEqual(['explain @a.py']);
  });

  it('says an allowed call was allowed, and no more than the record knows', () => {
    const state = reopen({ decisions: [{ ...approval, decision: 'allow', feedback: null }], calls });
    expect(state.items.find((item) => item.kind === 'approval')).toMatchObject({ state: 'allowed', outcome: 'Allowed.' });
  });

  it('says which rule an "always allow" saved, as the live card did', () => {
    const saved_rule = { rule: 'Bash(rm:*)', scope: 'local' as const, covers_call: false };
    const state = reopen({ decisions: [{ ...approval, decision: 'allow', feedback: null, saved_rule }], calls });
    expect(state.items.find((item) => item.kind === 'approval')).toMatchObject({
      state: 'allowed',
      outcome:
        'Allowed. From now on Bash(rm:*) is allowed (this project, just for me). ' +
        'That rule does not cover this call itself, so a call like it will be asked about again.',
    });
  });

  it('says a call was allowed by switching to accept-edits mode, as the live card did', () => {
    const state = reopen({ decisions: [{ ...approval, decision: 'allow', feedback: null, accepted_edits: true }], calls });
    expect(state.items.find((item) => item.kind === 'approval')).toMatchObject({ state: 'allowed', outcome: ACCEPTED_EDITS });
  });

  it('says a review was accepted by switching to accept-edits mode', () => {
    const state = reopen({ decisions: [approval, { ...review, accepted_edits: true }], calls });
    expect(state.items.find((item) => item.kind === 'review')).toMatchObject({
      state: 'accepted',
      outcome: `Accepted with your edits to a.py. ${ACCEPT_EDITS_ON}`,
    });
  });

  it('says which files of an accepted review were left as they were, and does not call them edited', () => {
    const files = [
      { path: '/ws/a.py', change: 'modify' as const },
      { path: '/ws/new.py', change: 'create' as const },
      { path: '/ws/old.py', change: 'delete' as const },
    ];
    const patched = { ...review, tool_name: 'ApplyPatch', files, edited: [], skipped: ['/ws/new.py', '/ws/old.py'] };
    const state = reopen({ decisions: [approval, patched], calls });
    expect(state.items.find((item) => item.kind === 'review')).toMatchObject({
      state: 'accepted',
      outcome: 'Accepted, without new.py (not created), old.py (kept, not deleted).',
      files: [
        { path: '/ws/a.py', label: 'a.py', change: 'modify' },
        { path: '/ws/new.py', label: 'new.py', change: 'create', leftOut: true },
        { path: '/ws/old.py', label: 'old.py', change: 'delete', leftOut: true },
      ],
    });
  });

  it('says a call whose approval was withdrawn was not answered', () => {
    const state = reopen({ decisions: [{ ...approval, answered_by: 'withdrawn', feedback: null }], calls });
    expect(state.items.find((item) => item.kind === 'approval')).toMatchObject({
      state: 'cancelled',
      outcome: 'Withdrawn: the turn ended before an answer.',
    });
  });

  it('from an older sidecar (no decisions, no summaries) still draws the conversation', () => {
    const state = reopen();
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    const todoCard = state.items.find((item) => item.kind === 'tool' && item.toolName === 'TodoWrite');
    expect(todoCard).toMatchObject({ status: 'done', resultSummary: 'Todos updated' });
  });
});
