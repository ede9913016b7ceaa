// @vitest-environment jsdom
/** The history list as the panel draws it: rows from the chat state, and what its buttons and keys send. */

import { describe, expect, it } from 'vitest';

import type { SessionInfo } from '../../src/protocol';
import { initialState } from '../../src/shared/chatModel';
import type { ChatState } from '../../src/shared/chatModel';
import type { ViewMessage } from '../../src/shared/messages';
import { SessionHistory } from '../../webview/sessionHistory';

const session = (sessionId: string, title: string, turns: number): SessionInfo => ({
  sessionId,
  title,
  workspace: '/ws',
  mode: 'default',
  reviewEdits: 'when_asking',
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
  live: false,
  turns,
});

function opened(): { history: SessionHistory; posted: ViewMessage[]; closed: number[] } {
  const posted: ViewMessage[] = [];
  const closed: number[] = [];
  const history = new SessionHistory((message) => posted.push(message), () => closed.push(1));
  document.body.replaceChildren(history.button, history.view);
  const state: ChatState = {
    ...initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default'),
    sidecar: { state: 'ready', detail: '' },
    sessionId: 's2',
    sessions: [session('s2', 'Explain the cache', 1), session('s1', 'Fix the parser', 3)],
  };
  history.draw(state);
  history.button.click();
  return { history, posted, closed };
}

const row = (title: string): HTMLElement => {
  const found = [...document.querySelectorAll<HTMLElement>('.history-row')].find((element) => element.textContent?.includes(title));
  if (!found) throw new Error(`no row ${title}`);
  return found;
};
const button = (within: HTMLElement, label: string): HTMLButtonElement => {
  const found = [...within.querySelectorAll('button')].find((element) => element.textContent === label);
  if (!found) throw new Error(`no button ${label}`);
  return found;
};

describe('the history list', () => {
  it('lists each session with its date and prompts, and renames one with Enter', () => {
    const { history, posted } = opened();
    expect(history.isOpen).toBe(true);
    expect(history.button.getAttribute('aria-expanded')).toBe('true');
    expect(row('Fix the parser').querySelector('.history-meta')?.textContent).toMatch(/^Today \d\d:\d\d · 3 prompts$/);
    expect(row('Explain the cache').querySelector('.history-meta')?.textContent).toContain('open now');

    button(row('Fix the parser'), 'Rename').click();
    const input = document.querySelector<HTMLInputElement>('input.history-rename');
    expect(input?.value).toBe('Fix the parser');
    expect(document.activeElement).toBe(input);
    if (!input) return;
    input.value = 'Parser notes';
    input.dispatchEvent(new Event('input'));
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(posted).toEqual([{ type: 'renameSession', sessionId: 's1', title: 'Parser notes' }]);
    expect(document.querySelector('input.history-rename')).toBeNull();
  });

  it('exports, deletes and opens through the host, and Escape leaves a rename before it closes the list', () => {
    const { history, posted, closed } = opened();
    button(row('Fix the parser'), 'Export Markdown').click();
    button(row('Fix the parser'), 'Export JSON').click();
    button(row('Fix the parser'), 'Delete…').click();
    button(row('Fix the parser'), 'Rename').click();
    history.view.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(document.querySelector('input.history-rename')).toBeNull();
    expect(history.isOpen).toBe(true);
    button(row('Fix the parser'), 'Fix the parser').click();
    expect(posted).toEqual([
      { type: 'exportSession', sessionId: 's1', format: 'markdown' },
      { type: 'exportSession', sessionId: 's1', format: 'json' },
      { type: 'deleteSession', sessionId: 's1' },
      { type: 'openSession', sessionId: 's1' },
    ]);
    expect(history.isOpen).toBe(false);
    expect(closed).toEqual([1]);
  });
});
