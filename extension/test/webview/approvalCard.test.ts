// @vitest-environment jsdom
/** The approval card as the transcript draws it, from the one card type: a waiting request's, and one from history. */

import { describe, expect, it } from 'vitest';

import type { ApprovalCard, ChatAction, Item } from '../../src/shared/chatModel';
import { initialState, reduce } from '../../src/shared/chatModel';
import type { ViewMessage } from '../../src/shared/messages';
import { renderItem } from '../../webview/components';

function drawn(actions: ChatAction[]): { element: HTMLElement; posted: ViewMessage[] } {
  const state = actions.reduce(reduce, initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default'));
  const item = state.items.find((candidate): candidate is Extract<Item, { kind: 'approval' }> => candidate.kind === 'approval');
  if (!item) throw new Error('no approval card');
  const posted: ViewMessage[] = [];
  const element = renderItem(item, { post: (message) => posted.push(message), now: () => 0, openTools: new Set(), decided: () => undefined });
  return { element, posted };
}

const buttons = (element: HTMLElement): string[] =>
  [...element.querySelectorAll<HTMLButtonElement>(':scope > .card-actions > button')].map((button) => button.textContent ?? '');

describe('the approval card', () => {
  it('draws a waiting request with its choices, and answers through the card id', () => {
    const card: ApprovalCard = {
      toolUseId: 't1',
      toolName: 'Bash',
      summary: 'mkdir build',
      reason: 'No rule allows Bash(mkdir build).',
      suggestions: [{ rule: 'Bash(mkdir:*)', scope: 'local' }],
      offersAcceptEdits: true,
    };
    const { element, posted } = drawn([{ type: 'approvalRequested', id: 'a1', card }]);
    expect(element.querySelector('.card-title')?.textContent).toBe('Allow Bash?');
    expect(element.querySelector('.card-summary')?.textContent).toBe('mkdir build');
    expect(element.querySelector('.card-reason')?.textContent).toBe('Why you are asked: No rule allows Bash(mkdir build).');
    expect(element.querySelector<HTMLInputElement>('.rule-input')?.value).toBe('Bash(mkdir:*)');
    expect(buttons(element)).toEqual(['Allow once', 'Always allow…', 'Allow, and accept edits', 'Deny…']);
    element.querySelector<HTMLButtonElement>(':scope > .card-actions > button.primary')?.click();
    expect(posted).toEqual([{ type: 'approval', id: 'a1', choice: { kind: 'once' } }]);
  });

  it('draws a card from history, which has only what the record keeps, with its answer', () => {
    const card: ApprovalCard = { toolUseId: 't1', toolName: 'Bash', summary: 'rm -rf build', reason: 'Deletes files.' };
    const { element } = drawn([
      { type: 'approvalRequested', id: 'h1', card },
      { type: 'approvalResolved', id: 'h1', state: 'denied', outcome: 'Denied.' },
    ]);
    expect(element.querySelector('.card-summary')?.textContent).toBe('rm -rf build');
    expect(element.querySelector('.card-outcome')?.textContent).toBe('Denied.');
    expect(element.querySelector('.card-outcome')?.getAttribute('title')).toBe('Why you were asked: Deletes files.');
    expect(buttons(element)).toEqual([]);
  });

  it('offers no "always allow" for a waiting request without suggested rules', () => {
    const card: ApprovalCard = { toolUseId: 't1', toolName: 'WebFetch', summary: 'https://example.com', reason: '' };
    const { element } = drawn([{ type: 'approvalRequested', id: 'a1', card }]);
    expect(buttons(element)).toEqual(['Allow once', 'Deny…']);
    expect(element.querySelector('.card-reason')?.textContent).toBe('Why you are asked: No rule allows this call.');
  });
});
