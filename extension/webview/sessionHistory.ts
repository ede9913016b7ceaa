/**
 * The history list: every session with its date and prompt count, found by title or by what was said, opened,
 * renamed, exported or deleted, and a new session one click away. It covers the conversation while it is open (the
 * header's History button); the rows come from the chat state (shared/sessionList.ts), what is done goes to the host.
 */

import type { ChatState } from '../src/shared/chatModel';
import type { ViewMessage } from '../src/shared/messages';
import { historyRows } from '../src/shared/sessionList';
import type { HistoryRow } from '../src/shared/sessionList';
import { clear, h } from './dom';

const SEARCH_DELAY_MS = 250;

export class SessionHistory {
  readonly button = h('button', { class: 'secondary history-button', title: 'Show the sessions: open, rename, search, export, delete', 'aria-expanded': 'false' }, 'History');
  readonly view = h('section', { class: 'session-history', 'aria-label': 'Session history', hidden: true });
  private readonly search = h('input', { type: 'search', class: 'history-search', placeholder: 'Search titles and conversations', 'aria-label': 'Search sessions' });
  private readonly list = h('ul', { class: 'history-list', 'aria-label': 'Sessions' });
  private readonly empty = h('p', { class: 'history-empty', hidden: true });
  private state: ChatState | undefined;
  /** The row being renamed, and what has been typed so far (kept across redraws). */
  private renaming: { sessionId: string; draft: string } | null = null;
  private searchTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly post: (message: ViewMessage) => void, private readonly closed: () => void) {
    this.button.addEventListener('click', () => (this.view.hidden ? this.open() : this.close()));
    this.search.addEventListener('input', () => {
      this.redraw();
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.post({ type: 'searchSessions', query: this.search.value }), SEARCH_DELAY_MS);
    });
    this.view.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.isComposing) return;
      event.preventDefault();
      event.stopPropagation();
      if (this.renaming) {
        this.renaming = null;
        this.redraw();
      } else {
        this.close();
      }
    });
    this.view.append(
      h(
        'div',
        { class: 'history-top' },
        h('h2', {}, 'Sessions'),
        h('button', { class: 'primary', onclick: () => this.startNew() }, 'New session'),
        h('button', { class: 'secondary', onclick: () => this.close(), title: 'Back to the conversation (Escape)' }, 'Close'),
      ),
      this.search,
      this.list,
      this.empty,
    );
  }

  get isOpen(): boolean {
    return !this.view.hidden;
  }

  open(): void {
    this.view.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    this.redraw();
    this.search.focus();
  }

  close(): void {
    this.view.hidden = true;
    this.renaming = null;
    this.button.setAttribute('aria-expanded', 'false');
    this.closed();
  }

  draw(state: ChatState): void {
    this.state = state;
    this.button.disabled = state.sidecar.state !== 'ready';
    if (this.isOpen) this.redraw();
  }

  private redraw(): void {
    const state = this.state;
    if (!state) return;
    const rows = historyRows(state.sessions, state.sessionId, state.sessionSearch, this.search.value, new Date());
    const focusedRename = this.list.querySelector('input.history-rename') === document.activeElement;
    clear(this.list);
    for (const row of rows) this.list.append(this.rowElement(row));
    this.empty.hidden = rows.length > 0;
    this.empty.textContent = this.search.value.trim() ? 'No session holds that text.' : 'No sessions yet: your first message starts one.';
    if (focusedRename) this.list.querySelector<HTMLInputElement>('input.history-rename')?.focus();
  }

  private rowElement(row: HistoryRow): HTMLElement {
    const renaming = this.renaming?.sessionId === row.sessionId ? this.renaming : null;
    const title = renaming
      ? this.renameField(row, renaming)
      : h('button', { class: 'link history-title', title: `Open "${row.title}"`, onclick: () => this.openSession(row) }, row.title);
    return h(
      'li',
      { class: 'history-row', 'data-session-id': row.sessionId, 'data-current': String(row.current) },
      title,
      h(
        'div',
        { class: 'history-meta' },
        h('time', { datetime: row.updatedAt, title: row.updatedAt }, row.when),
        ` · ${row.prompts}`,
        row.current ? ' · open now' : '',
      ),
      row.snippet ? h('div', { class: 'history-snippet' }, row.snippet) : null,
      renaming
        ? null
        : h(
            'div',
            { class: 'card-actions history-actions' },
            h('button', { class: 'secondary', onclick: () => this.startRename(row) }, 'Rename'),
            h('button', { class: 'secondary', onclick: () => this.post({ type: 'exportSession', sessionId: row.sessionId, format: 'markdown' }) }, 'Export Markdown'),
            h('button', { class: 'secondary', onclick: () => this.post({ type: 'exportSession', sessionId: row.sessionId, format: 'json' }) }, 'Export JSON'),
            // The host asks for confirmation (a modal): a deleted transcript cannot come back.
            h('button', { class: 'secondary', onclick: () => this.post({ type: 'deleteSession', sessionId: row.sessionId }) }, 'Delete…'),
          ),
    );
  }

  private renameField(row: HistoryRow, renaming: { sessionId: string; draft: string }): HTMLElement {
    const input = h('input', { type: 'text', class: 'history-rename', value: renaming.draft, 'aria-label': `New title for "${row.title}"`, maxlength: 200 });
    const save = (): void => {
      const title = input.value.trim();
      this.renaming = null;
      if (title && title !== row.title) this.post({ type: 'renameSession', sessionId: row.sessionId, title });
      this.redraw();
    };
    input.addEventListener('input', () => (renaming.draft = input.value));
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.isComposing) {
        event.preventDefault();
        save();
      }
    });
    return h(
      'div',
      { class: 'history-rename-row' },
      input,
      h('button', { class: 'primary', onclick: save }, 'Save'),
      h('button', { class: 'secondary', onclick: () => { this.renaming = null; this.redraw(); } }, 'Cancel'),
    );
  }

  private startRename(row: HistoryRow): void {
    this.renaming = { sessionId: row.sessionId, draft: row.title };
    this.redraw();
    const input = this.list.querySelector<HTMLInputElement>('input.history-rename');
    input?.focus();
    input?.select();
  }

  private openSession(row: HistoryRow): void {
    if (!row.current) this.post({ type: 'openSession', sessionId: row.sessionId });
    this.close();
  }

  private startNew(): void {
    this.post({ type: 'newSession' });
    this.close();
  }
}
