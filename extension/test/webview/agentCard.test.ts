// @vitest-environment jsdom
/** The Agent card and a child's approval card as the transcript draws them. */

import { describe, expect, it } from 'vitest';

import type { ChatEvent } from '../../src/protocol';
import type { ChatAction, ChatState, Item } from '../../src/shared/chatModel';
import { initialState, reduce } from '../../src/shared/chatModel';
import { renderItem } from '../../webview/components';

const child = (event: ChatEvent): ChatAction => ({
  type: 'event',
  at: 2,
  event: { type: 'subagent', task_id: 'agent-1', agent_type: 'explore', event: event as unknown as Record<string, unknown> },
});

const subagent = { taskId: 'agent-1', agentType: 'explore', description: 'find the tests' };
const actions: ChatAction[] = [
  {
    type: 'event',
    at: 1,
    event: { type: 'tool_call_started', tool_use_id: 'agent-1', name: 'Agent', input: { description: 'find the tests', prompt: 'p', subagent_type: 'explore' }, summary: 'explore: find the tests' },
  },
  child({ type: 'tool_call_started', tool_use_id: 'c1', name: 'Glob', input: {}, summary: 'tests/**' }),
  child({
    type: 'tool_call_finished',
    tool_use_id: 'c1',
    name: 'Glob',
    is_error: false,
    summary: '2 files',
    result: { type: 'tool_result', tool_use_id: 'c1', content: 'tests/a.py\ntests/b.py', is_error: false },
  }),
  child({ type: 'tool_call_started', tool_use_id: 'c2', name: 'Bash', input: {}, summary: 'pytest -q' }),
  { type: 'approvalRequested', id: 'a1', at: 3, card: { toolUseId: 'c2', toolName: 'Bash', summary: 'pytest -q', reason: 'No rule allows it.', subagent } },
];

const stateOf = (all: ChatAction[]): ChatState =>
  all.reduce(reduce, initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default'));

function draw(state: ChatState, kind: Item['kind']): HTMLElement {
  const item = state.items.find((candidate) => candidate.kind === kind);
  if (!item) throw new Error(`no ${kind} item`);
  return renderItem(item, { post: () => undefined, now: () => 10, openTools: new Set(), decided: () => undefined });
}

describe('the Agent card', () => {
  it("is a card of its own, open while the child runs, with the child's calls inside and the one that waits marked", () => {
    const state = stateOf(actions);
    const card = draw(state, 'tool') as HTMLDetailsElement;
    expect(card.classList.contains('agent-card')).toBe(true);
    expect(card.open).toBe(true);
    expect(card.querySelector('summary .tool-summary')?.textContent).toBe('explore: find the tests');
    expect(card.querySelector('.agent-status')?.textContent).toBe('running');
    const lines = [...card.querySelectorAll('.agent-call')].map((line) => line.textContent);
    expect(lines).toEqual(['✓Globtests/**2 files', '◌Bashpytest -qwaits for your approval below']);
    expect(card.querySelector('[data-call="c2"]')?.classList.contains('agent-call-waiting')).toBe(true);

    const approval = draw(state, 'approval');
    // The child's name is in the card's title, and the card is drawn as joined to its Agent card.
    expect(approval.querySelector('.card-title')?.textContent).toBe('Allow Bash? — asked by the subagent explore: find the tests');
    expect(approval.querySelector('.card-title .card-subagent strong')?.textContent).toBe('explore: find the tests');
    expect(approval.classList.contains('approval-subagent')).toBe(true);
    expect(state.items.map((item) => item.kind)).toEqual(['tool', 'approval']);
  });

  it("moves the keyboard from the waiting call's line to the approval card it waits on", () => {
    const state = stateOf(actions);
    const card = draw(state, 'tool');
    const approval = draw(state, 'approval');
    document.body.replaceChildren(card, approval);
    const link = card.querySelector<HTMLButtonElement>('[data-call="c2"] button.agent-call-goto');
    expect(link?.textContent).toBe('waits for your approval below');
    link?.click();
    expect(document.activeElement).toBe(approval);
    expect(card.querySelector('[data-call="c1"] button')).toBeNull(); // a call that waits on nothing has no link
  });

  it("draws a grandchild's calls nested under the call of the child that started it", () => {
    const grandchild = (event: ChatEvent): ChatAction =>
      child({ type: 'subagent', task_id: 'c3', agent_type: 'general', event: event as unknown as Record<string, unknown> });
    const state = stateOf([
      ...actions,
      child({ type: 'tool_call_started', tool_use_id: 'c3', name: 'Agent', input: { description: 'dig', prompt: 'p', subagent_type: 'general' }, summary: 'general: dig' }),
      grandchild({ type: 'tool_call_started', tool_use_id: 'g1', name: 'Read', input: {}, summary: 'deep.py' }),
    ]);
    const card = draw(state, 'tool');
    const nested = card.querySelector('[data-call="c3"] .agent-nested');
    expect(nested?.querySelector('.agent-status')?.textContent).toBe('running');
    expect(nested?.querySelector('ol.agent-calls')?.getAttribute('aria-label')).toBe('Calls of general: dig');
    expect([...(nested?.querySelectorAll('.agent-call') ?? [])].map((line) => line.textContent)).toEqual(['◌Readdeep.py']);
    // The top list holds the child's own calls only.
    expect([...card.querySelectorAll(':scope > ol > .agent-call')].map((line) => line.getAttribute('data-call'))).toEqual(['c1', 'c2', 'c3']);
  });

  it('shows the final answer and its status once done, and folds away unless the person opened it', () => {
    const done = stateOf([
      ...actions,
      { type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.', at: 4 } as ChatAction,
      child({ type: 'request_started', request: 2 }),
      child({ type: 'text_delta', text: 'The tests are in **tests/**.' }),
      child({ type: 'turn_end', stop_reason: 'end_turn', requests: 2, usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }),
    ]);
    const card = draw(done, 'tool') as HTMLDetailsElement;
    expect(card.open).toBe(false);
    expect(card.querySelector('.agent-status')?.textContent).toBe('done');
    expect(card.querySelector('.agent-answer strong')?.textContent).toBe('tests/');
    expect(card.querySelector('.agent-call-waiting')).toBeNull();
  });

  it('stays folded through the child\'s events once the person folds it while it runs', () => {
    const openTools = new Set<string>();
    const drawAgent = (state: ChatState): HTMLDetailsElement => {
      const item = state.items.find((candidate) => candidate.kind === 'tool');
      if (!item) throw new Error('no Agent card');
      return renderItem(item, { post: () => undefined, now: () => 10, openTools, decided: () => undefined }) as HTMLDetailsElement;
    };
    const first = drawAgent(stateOf(actions));
    first.dispatchEvent(new Event('toggle')); // what the browser fires, later, for the open state the card was drawn with
    first.open = false; // the person folds it
    first.dispatchEvent(new Event('toggle'));
    const more = stateOf([...actions, child({ type: 'text_delta', text: 'still working' })]);
    expect(drawAgent(more).open).toBe(false);
    expect(openTools.size).toBe(0); // nothing the person opened: once done it is folded
  });
});
