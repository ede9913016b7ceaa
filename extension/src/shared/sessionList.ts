/** The history list's rows: which sessions, under which title, with which date, prompt count and snippet. Pure. */

import type { SessionInfo } from '../protocol';
import type { SessionSearch } from './chatTypes';

export interface HistoryRow {
  sessionId: string;
  title: string;
  /** When it was last used, in words: "Today 14:05", "Yesterday 09:12", "4 Dec 14:05", "4 Dec 2025". */
  when: string;
  /** Its ISO time, for a tooltip and a <time> element. */
  updatedAt: string;
  prompts: string;
  /** Where the search found its text in the conversation (null: in the title, or no search). */
  snippet: string | null;
  current: boolean;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The sessions with a conversation (the sidecar names a session after its first prompt), newest first as listed,
 * and always the one on screen; while a search is on, only those it found (its answer to an older query is ignored).
 */
export function historyRows(
  sessions: readonly SessionInfo[],
  current: string | null,
  search: SessionSearch | null,
  query: string,
  now: Date,
): HistoryRow[] {
  const wanted = query.trim();
  const found = search && wanted !== '' && search.query === wanted ? new Map(search.matches.map((m) => [m.sessionId, m])) : null;
  return sessions
    .filter((session) => session.title.trim() !== '' || session.sessionId === current)
    .filter((session) => (found ? found.has(session.sessionId) : !wanted || titleHolds(session, wanted)))
    .map((session) => ({
      sessionId: session.sessionId,
      title: session.title.trim() || 'New session',
      when: dateLabel(session.updatedAt, now),
      updatedAt: session.updatedAt,
      prompts: promptCount(session.turns ?? 0),
      snippet: found?.get(session.sessionId)?.snippet ?? null,
      current: session.sessionId === current,
    }));
}

/** Until the sidecar answers a search, the titles already on screen are filtered (the list never waits blank). */
function titleHolds(session: SessionInfo, query: string): boolean {
  return session.title.toLowerCase().includes(query.toLowerCase());
}

export function promptCount(turns: number): string {
  if (turns === 0) return 'no prompts yet';
  return turns === 1 ? '1 prompt' : `${turns} prompts`;
}

/** A date as people read a history: the time for today and yesterday, the day for this year, else the year. */
export function dateLabel(iso: string, now: Date): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  const time = `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
  const day = (date: Date): number => new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
  const days = Math.round((day(now) - day(at)) / 86_400_000);
  if (days === 0) return `Today ${time}`;
  if (days === 1) return `Yesterday ${time}`;
  const date = `${at.getDate()} ${MONTHS[at.getMonth()] ?? ''}`;
  return at.getFullYear() === now.getFullYear() ? `${date} ${time}` : `${date} ${at.getFullYear()}`;
}
