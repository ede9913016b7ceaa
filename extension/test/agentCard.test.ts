/** The Agent card's model: a child agent's events (wrapped in `subagent` events) and approvals → the card's state. */

import { describe, expect, it } from 'vitest';

import type { ChatEvent, SubagentRun, ToolResult } from '../src/protocol';
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

  it("draws a reopened session's Agent call from its result alone when no record of its child came (an older sidecar)", () => {
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

  it("redraws a reopened session's Agent card from the record of its child: its calls, a grandchild's, its status and answer", () => {
    const stored: SubagentRun = {
      task_id: 'agent-1',
      agent_type: 'explore',
      description: 'find the tests',
      calls: [
        { id: 'c1', name: 'Glob', summary: 'tests/**', result_summary: '2 files', is_error: false, subagent: null },
        {
          id: 'c2',
          name: 'Agent',
          summary: 'explore: look deeper',
          result_summary: 'deeper: nothing',
          is_error: false,
          subagent: {
            task_id: 'c2',
            agent_type: 'explore',
            description: 'look deeper',
            calls: [{ id: 'g1', name: 'Read', summary: 'tests/a.py', result_summary: 'denied', is_error: true, subagent: null }],
            stop_reason: 'max_turns',
            answer: 'deeper: nothing',
          },
        },
        { id: 'c3', name: 'Bash', summary: 'pytest -q', result_summary: null, is_error: false, subagent: null },
      ],
      stop_reason: 'end_turn',
      answer: 'The tests are in tests/.',
    };
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
          { role: 'user', content: [result('agent-1', 'The tests are in tests/.')] },
        ],
        subagents: { 'agent-1': stored },
        decisions: [
          { kind: 'approval', tool_use_id: 'g1', tool_name: 'Read', summary: 'tests/a.py', reason: 'r', answered_by: 'user', feedback: 'not that one', accepted_edits: false, decision: 'deny', saved_rule: null },
          { kind: 'approval', tool_use_id: 'elsewhere', tool_name: 'Read', summary: 'x', reason: 'r', answered_by: 'user', feedback: null, accepted_edits: false, decision: 'allow', saved_rule: null },
        ],
      },
    ]);
    // The grandchild's answered approval is drawn under the Agent card, naming the grandchild, as it was live; a
    // decision about a call no card shows is not drawn.
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'tool', 'approval']);
    expect(state.items[2]).toMatchObject({
      kind: 'approval',
      state: 'denied',
      card: { toolUseId: 'g1', subagent: { taskId: 'c2', agentType: 'explore', description: 'look deeper' } },
    });
    const card = view(state);
    expect(card).toMatchObject({ status: 'done', statusLabel: 'done', title: 'explore: find the tests', text: 'The tests are in tests/.' });
    expect(card.calls.map((call) => [call.id, call.toolName, call.summary, call.status, call.resultSummary])).toEqual([
      ['c1', 'Glob', 'tests/**', 'done', '2 files'],
      ['c2', 'Agent', 'explore: look deeper', 'done', 'deeper: nothing'],
      ['c3', 'Bash', 'pytest -q', 'error', ''], // no result was recorded, and nothing runs any more
    ]);
    expect(card.calls[1]?.agent).toMatchObject({
      agentType: 'explore',
      description: 'look deeper',
      status: 'stopped',
      stopReason: 'stopped at its request limit',
      text: 'deeper: nothing',
      calls: [{ id: 'g1', toolName: 'Read', status: 'error', resultSummary: 'denied' }],
    });
  });

  it('redraws a child that never ended (the session crashed mid-child) as interrupted, and nothing in it as running', () => {
    // What the sidecar sends for such a run: its steps so far, read back as interrupted (a grandchild's too).
    const stored: SubagentRun = {
      task_id: 'agent-1',
      agent_type: 'explore',
      description: 'find the tests',
      calls: [
        { id: 'c1', name: 'Glob', summary: 'tests/**', result_summary: '2 files', is_error: false, subagent: null },
        {
          id: 'c2',
          name: 'Agent',
          summary: 'explore: look deeper',
          result_summary: null,
          is_error: false,
          subagent: {
            task_id: 'c2',
            agent_type: 'explore',
            description: 'look deeper',
            calls: [{ id: 'g1', name: 'Bash', summary: 'sleep 30', result_summary: null, is_error: false, subagent: null }],
            stop_reason: 'interrupted',
            answer: '',
          },
        },
      ],
      stop_reason: 'interrupted',
      answer: 'Looking at the tests first.',
    };
    const state = run([
      {
        type: 'sessionOpened',
        sessionId: 's1',
        mode: 'default',
        todos: [],
        busy: false,
        // The crash left the Agent call without a result.
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'where are the tests?' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'agent-1', name: 'Agent', input: agentInput }] },
        ],
        subagents: { 'agent-1': stored },
      },
    ]);
    const card = view(state);
    expect(card).toMatchObject({ status: 'stopped', statusLabel: 'stopped: interrupted', text: 'Looking at the tests first.' });
    expect(card.calls.map((call) => [call.id, call.status, call.resultSummary])).toEqual([
      ['c1', 'done', '2 files'],
      ['c2', 'error', ''],
    ]);
    expect(card.calls[1]?.agent).toMatchObject({
      status: 'stopped',
      stopReason: 'interrupted',
      calls: [{ id: 'g1', toolName: 'Bash', status: 'error', waiting: false }],
    });
  });

  it("puts a child's approval card right under its Agent card, after the child's earlier ones, and links the waiting call to it", () => {
    const ask = (id: string, toolUseId: string): ChatAction => ({
      type: 'approvalRequested',
      id,
      at: 3_000,
      card: { toolUseId, toolName: 'Bash', summary: toolUseId, reason: 'r', subagent: { taskId: 'agent-1', agentType: 'explore', description: 'find the tests' } },
    });
    const state = run([
      started,
      startedAs('agent-2'), // a sibling Agent call of the same batch: drawn after the first
      child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Bash', input: {}, summary: 'c1' }),
      child({ type: 'tool_call_started', tool_use_id: 'c2', name: 'Bash', input: {}, summary: 'c2' }),
      ask('a1', 'c1'),
      ask('a2', 'c2'),
      { type: 'approvalRequested', id: 'a3', at: 3_000, card: { toolUseId: 'p1', toolName: 'Bash', summary: 'p1', reason: 'r' } },
    ]);
    expect(state.items.map((item) => item.id)).toEqual(['agent-1', 'a1', 'a2', 'agent-2', 'a3']);
    expect(view(state).calls.map((call) => [call.waiting, call.approvalId])).toEqual([
      [true, 'a1'],
      [true, 'a2'],
    ]);
    const answered = run([{ type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.', at: 4_000 }], state);
    expect(view(answered).calls[0]).toMatchObject({ waiting: false });
    expect(view(answered).calls[0]).not.toHaveProperty('approvalId');
  });

  it("shows a grandchild's calls inside its parent child's call, live, and its approval joins the top Agent card", () => {
    const grandchild = (event: ChatEvent): ChatAction =>
      child({ type: 'subagent', task_id: 'c1', agent_type: 'general', event: event as unknown as Record<string, unknown> });
    const deeper = { description: 'dig', prompt: 'dig in', subagent_type: 'general' };
    let state = run([
      started,
      child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Agent', input: deeper, summary: 'general: dig' }),
      grandchild({ type: 'tool_call_started', tool_use_id: 'g1', name: 'Bash', input: {}, summary: 'make' }),
      { type: 'approvalRequested', id: 'a1', at: 3_000, card: { toolUseId: 'g1', toolName: 'Bash', summary: 'make', reason: 'r', subagent: { taskId: 'c1', agentType: 'general', description: 'dig' } } },
    ]);
    expect(state.items.map((item) => item.id)).toEqual(['agent-1', 'a1']);
    expect(agentItem(state).waitingSince).toBe(3_000);
    const nested = view(state).calls[0]?.agent;
    expect(nested).toMatchObject({ agentType: 'general', description: 'dig', status: 'running' });
    expect(nested?.calls).toEqual([{ id: 'g1', toolName: 'Bash', summary: 'make', status: 'running', resultSummary: '', waiting: true, approvalId: 'a1' }]);

    state = run(
      [
        { type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.', at: 4_000 },
        grandchild(finished('g1', 'built', false, 'Bash')),
        grandchild({ type: 'turn_end', stop_reason: 'end_turn', requests: 1, usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }),
        child(finished('c1', 'dug: built', false, 'Agent')),
      ],
      state,
    );
    const done = view(state).calls[0];
    expect(done).toMatchObject({ status: 'done', resultSummary: 'dug: built', agent: { status: 'done', text: 'dug: built' } });
    expect(done?.agent?.calls[0]).toMatchObject({ status: 'done', resultSummary: 'built', waiting: false });
    expect(agentItem(state)).toMatchObject({ waitingSince: null, waitedMs: 1_000 });
  });

  it('ignores a child event for a call that is no Agent card, and a payload that is no event', () => {
    const state = run([started]);
    expect(run([child({ type: 'text_delta', text: 'lost' }, 'nope')], state)).toEqual(state);
    const junk: ChatAction = { type: 'event', at: 1, event: { type: 'subagent', task_id: 'agent-1', agent_type: 'explore', event: { nothing: 1 } } };
    expect(view(run([junk], state))).toEqual(view(state));
  });
});
