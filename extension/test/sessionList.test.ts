import { describe, expect, it } from 'vitest';

import type { ChatMessage, SessionInfo } from '../src/protocol';
import type { ChatState } from '../src/shared/chatModel';
import { initialState, reduce } from '../src/shared/chatModel';
import { parseViewMessage } from '../src/shared/messages';
import { dateLabel, historyRows, promptCount } from '../src/shared/sessionList';

// Local times, as the list shows them; given as ISO strings, as the sidecar sends them.
const now = new Date(2026, 11, 4, 21, 30);
const at = (...parts: [number, number, number, number, number]): string => new Date(...parts).toISOString();

const session = (sessionId: string, title: string, updatedAt: string, turns = 1): SessionInfo => ({
  sessionId,
  title,
  workspace: '/ws',
  mode: 'default',
  reviewEdits: 'when_asking',
  createdAt: updatedAt,
  updatedAt,
  live: false,
  turns,
});

const sessions = [
  session('s3', 'Fix the parser', at(2026, 11, 4, 9, 5), 3),
  session('s2', '', at(2026, 11, 3, 8, 0), 0),
  session('s1', 'Explain the cache', at(2026, 11, 3, 23, 59)),
  session('s0', 'Old work', at(2025, 0, 15, 10, 0), 12),
];

describe('the history list', () => {
  it('gives each session its date in words and its prompt count, the one on screen marked', () => {
    expect(historyRows(sessions, 's1', null, '', now)).toEqual([
      { sessionId: 's3', title: 'Fix the parser', when: 'Today 09:05', updatedAt: sessions[0]?.updatedAt, prompts: '3 prompts', snippet: null, current: false },
      { sessionId: 's1', title: 'Explain the cache', when: 'Yesterday 23:59', updatedAt: sessions[2]?.updatedAt, prompts: '1 prompt', snippet: null, current: true },
      { sessionId: 's0', title: 'Old work', when: '15 Jan 2025', updatedAt: sessions[3]?.updatedAt, prompts: '12 prompts', snippet: null, current: false },
    ]);
    // A session nobody wrote in is listed only while it is the one on screen.
    expect(historyRows(sessions, 's2', null, '', now).map((row) => [row.title, row.prompts])).toContainEqual(['New session', 'no prompts yet']);
  });

  it('dates this year by day and time, other years by day and year', () => {
    expect(dateLabel(at(2026, 10, 28, 7, 3), now)).toBe('28 Nov 07:03');
    expect(dateLabel(at(2024, 5, 1, 7, 3), now)).toBe('1 Jun 2024');
    expect(dateLabel('not a date', now)).toBe('');
    expect(promptCount(0)).toBe('no prompts yet');
  });

  it("shows the sidecar's matches for the query typed, with their snippets, and filters titles until it answers", () => {
    const search = { query: 'cache', matches: [{ sessionId: 's0', inTitle: false, snippet: '…the cache keeps…' }] };
    expect(historyRows(sessions, null, search, ' cache ', now).map((row) => [row.sessionId, row.snippet])).toEqual([
      ['s0', '…the cache keeps…'],
    ]);
    // Typed further than the answer: the titles on screen are filtered meanwhile (case ignored).
    expect(historyRows(sessions, null, search, 'PARSER', now).map((row) => row.sessionId)).toEqual(['s3']);
  });

  it('keeps what the search found in the state until it is ended', () => {
    const start = initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default');
    const search = { query: 'x', matches: [] };
    const found = reduce(start, { type: 'sessionSearch', search });
    expect(found.sessionSearch).toBe(search);
    expect(reduce(found, { type: 'sessionSearch', search: null }).sessionSearch).toBeNull();
  });

  it('accepts the list\'s messages only when they are whole', () => {
    expect(parseViewMessage({ type: 'renameSession', sessionId: 's1', title: '  New name ' })).toEqual({ type: 'renameSession', sessionId: 's1', title: 'New name' });
    expect(parseViewMessage({ type: 'renameSession', sessionId: 's1', title: '   ' })).toBeUndefined();
    expect(parseViewMessage({ type: 'exportSession', sessionId: 's1', format: 'pdf' })).toBeUndefined();
    expect(parseViewMessage({ type: 'exportSession', sessionId: 's1', format: 'json' })).toEqual({ type: 'exportSession', sessionId: 's1', format: 'json' });
    expect(parseViewMessage({ type: 'searchSessions', query: '' })).toEqual({ type: 'searchSessions', query: '' });
  });
});

describe('a reopened session that was compacted', () => {
  const text = (role: 'user' | 'assistant', value: string): ChatMessage => ({ role, content: [{ type: 'text', text: value }] });
  const messages = [text('user', 'first'), text('assistant', 'one'), text('user', 'second'), text('assistant', 'two'), text('user', 'third')];
  const open = (compactions: { after_messages: number; summarised_messages: number }[]): ChatState =>
    reduce(initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default'), {
      type: 'sessionOpened',
      sessionId: 's1',
      mode: 'default',
      messages,
      todos: [],
      busy: false,
      compactions: compactions.map((mark) => ({ ...mark, trigger: 'auto', summary: '## Goal\nparse', at: '2026-12-04T20:00:00Z' })),
    });

  it('shows every old turn, marks the summarised ones, and puts the notice with its summary where it happened', () => {
    const state = open([{ after_messages: 4, summarised_messages: 3 }]);
    expect(state.items.map((item) => (item.kind === 'notice' ? 'notice' : `${item.kind}:${'text' in item ? item.text : ''}`))).toEqual([
      'user:first',
      'assistant:one',
      'user:second',
      'assistant:two',
      'notice',
      'user:third',
    ]);
    expect(state.summarised).toBe(3); // first, one, second: the model sees them through the summary only
    expect(state.items[4]).toMatchObject({ kind: 'notice', summary: '## Goal\nparse' });
    expect(state.items[4]?.kind === 'notice' && state.items[4].text).toContain('a summary of the 3 messages above');
  });

  it('marks nothing without a compaction, and everything when all was summarised', () => {
    expect(open([]).summarised).toBe(0);
    expect(open([{ after_messages: 5, summarised_messages: 5 }]).summarised).toBe(5);
  });
});
