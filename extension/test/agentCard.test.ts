/** The Agent card's model: a child agent's events (wrapped in `subagent` events) and approvals → the card's state. */

import { describe, expect, it } from 'vitest';

import type { ChatEvent, ToolResult } from '../src/protocol';
import { agentCardView } from '../src/shared/agentCard';
import type { ApprovalCard, ChatAction, ChatState, Item } from '../src/shared/chatModel';
import { initialState, reduce } from '../src/shared/chatModel';

type ToolItem = Extract<Item, { kind: 'tool' }>;

const start = (): ChatState =>
  initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default');
const run = (actions: ChatAction[], state = start()): ChatState => actions.reduce(reduce, state);

const agentInput = { description: 'find the tests', prompt: 'Find where the tests live.', subagent_type: 'explore' };
const startedAs = (id: string): ChatAction => ({
  type: 'event',
  at: 1_000,
  event: { type: 'tool_call_started', tool_use_id: id, name: 'Agent', input: agentInput, summary: 'explore: find the tests' },
});
const started = startedAs('agent-1');

/** An event of the child of the Agent call `taskId`, as the sidecar forwards it. */
function child(event: ChatEvent, taskId = 'agent-1', at = 2_000): ChatAction {
  return { type: 'event', at, event: { type: 'subagent', task_id: taskId, agent_type: 'explore', event: event as unknown as Record<string, unknown> } };
}

const result = (id: string, text: string, isError = false): ToolResult => ({
  type: 'tool_result',
  tool_use_id: id,
  content: [{ type: 'text', text }],
  is_error: isError,
});

function finished(id: string, text: string, isError = false, name = 'Read'): ChatEvent {
  return { type: 'tool_call_finished', tool_use_id: id, name, is_error: isError, summary: text.split('\n')[0] ?? '', result: result(id, text, isError) };
}

function agentItem(state: ChatState, id = 'agent-1'): ToolItem {
  const item = state.items.find((candidate): candidate is ToolItem => candidate.kind === 'tool' && candidate.id === id);
  if (!item?.agent) throw new Error(`no Agent card ${id}`);
  return item;
}

const view = (state: ChatState, id = 'agent-1') => {
  const item = agentItem(state, id);
  if (!item.agent) throw new Error('no run');
  return agentCardView(item, item.agent);
};

describe('the Agent card', () => {
  it('starts with the type and description of the call, and no other tool gets one', () => {
    const state = run([started, { type: 'event', at: 1, event: { type: 'tool_call_started', tool_use_id: 'r', name: 'Read', input: {}, summary: 'a' } }]);
    expect(view(state)).toMatchObject({ status: 'running', title: 'explore: find the tests', statusLabel: 'running', calls: [], text: '' });
    expect(state.items.find((item) => item.id === 'r')).not.toHaveProperty('agent');
  });

  it("routes the child's calls, live, into its own card by task id, and finishes with its answer", () => {
    let state = run([
      started,
      startedAs('agent-2'),
      child({ type: 'request_started', request: 1 }),
      child({ type: 'text_delta', text: 'Looking ' }),
      child({ type: 'text_delta', text: 'around.' }),
      child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Glob', input: { pattern: 'tests/**' }, summary: 'tests/**' }),
      child({ type: 'tool_call_started', tool_use_id: 'c2', name: 'Read', input: {}, summary: 'tests/a.py' }),
    ]);
    expect(view(state).calls.map((call) => [call.id, call.toolName, call.summary, call.status])).toEqual([
      ['c1', 'Glob', 'tests/**', 'running'],
      ['c2', 'Read', 'tests/a.py', 'running'],
    ]);
    expect(view(state).text).toBe('Looking around.');
    expect(view(state, 'agent-2').calls).toEqual([]); // another child's card is not touched
    // The top-level transcript holds the two Agent cards only: the child's calls are inside.
    expect(state.items.map((item) => item.id)).toEqual(['agent-1', 'agent-2']);

    state = run(
      [
        child(finished('c1', 'tests/a.py', false, 'Glob')),
        child(finished('c2', 'Refused: outside the working directories', true)),
        child({ type: 'request_started', request: 2 }),
        child({ type: 'text_delta', text: 'The tests are in tests/.' }),
        child({ type: 'turn_end', stop_reason: 'end_turn', requests: 2, usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }),
      ],
      state,
    );
    expect(view(state)).toMatchObject({ status: 'done', statusLabel: 'done', text: 'The tests are in tests/.' });
    expect(view(state).calls.map((call) => [call.status, call.resultSummary])).toEqual([
      ['done', 'tests/a.py'],
      ['error', 'Refused: outside the working directories'],
    ]);
    state = run([{ type: 'event', at: 9_000, event: finished('agent-1', 'The tests are in tests/.', false, 'Agent') }], state);
    expect(agentItem(state)).toMatchObject({ status: 'done', finishedAt: 9_000 });
    expect(view(state).text).toBe('The tests are in tests/.');
  });

  it("marks the child's call that waits on an approval, and the Agent call waits with it until it is answered", () => {
    const card: ApprovalCard = {
      toolUseId: 'c1',
      toolName: 'Bash',
      summary: 'npm test',
      reason: 'No rule allows it.',
      subagent: { taskId: 'agent-1', agentType: 'explore', description: 'find the tests' },
    };
    let state = run([
      started,
      child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Bash', input: {}, summary: 'npm test' }),
      { type: 'approvalRequested', id: 'a1', card, at: 3_000 },
    ]);
    expect(view(state).calls[0]?.waiting).toBe(true);
    expect(agentItem(state).waitingSince).toBe(3_000);
    const top = state.items.find((item) => item.kind === 'approval');
    expect(top).toMatchObject({ card: { subagent: card.subagent } }); // the card the person answers names the child
    state = run([{ type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.', at: 5_000 }], state);
    expect(view(state).calls[0]?.waiting).toBe(false);
    expect(agentItem(state)).toMatchObject({ waitingSince: null, waitedMs: 2_000 });
  });

  it('says why a child stopped, and an aborted turn stops the card and its running calls', () => {
    const stopped = run([
      started,
      child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Bash', input: {}, summary: 'sleep 30' }),
      child({ type: 'turn_end', stop_reason: 'interrupted', requests: 1, usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }),
    ]);
    expect(view(stopped)).toMatchObject({ status: 'stopped', statusLabel: 'stopped: interrupted' });

    const aborted = run([
      started,
      child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Bash', input: {}, summary: 'sleep 30' }),
      { type: 'turnAborted', reason: 'the sidecar stopped', at: 4_000 },
    ]);
    expect(view(aborted)).toMatchObject({ status: 'stopped', statusLabel: 'stopped: Interrupted: the sidecar stopped' });
    expect(view(aborted).calls[0]?.status).toBe('error');
  });

  it("draws a reopened session's Agent call from its result alone (no child events are stored)", () => {
    const state = run([
      {
        type: 'sessionOpened',
        sessionId: 's1',
        mode: 'default',
        todos: [],
        busy: false,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'where are the tests?' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'agent-1', name: 'Agent', input: agentInput }] },
          { role: 'user', content: [result('agent-1', 'In tests/.')] },
        ],
      },
    ]);
    expect(view(state)).toMatchObject({ status: 'done', title: 'explore: find the tests', text: 'In tests/.', calls: [] });
  });

  it('ignores a child event for a call that is no Agent card, and a payload that is no event', () => {
    const state = run([started]);
    expect(run([child({ type: 'text_delta', text: 'lost' }, 'nope')], state)).toEqual(state);
    const junk: ChatAction = { type: 'event', at: 1, event: { type: 'subagent', task_id: 'agent-1', agent_type: 'explore', event: { nothing: 1 } } };
    expect(view(run([junk], state))).toEqual(view(state));
  });
});
