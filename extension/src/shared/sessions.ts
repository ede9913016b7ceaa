/** The session picker's entries. Pure. */

import type { SessionInfo } from '../protocol';

export interface SessionEntry {
  sessionId: string;
  label: string;
}

/**
 * The sessions worth picking: those with a conversation (the sidecar names a session after its first message, so a
 * session without a name has none), newest first as listed, and always the one on screen.
 */
export function sessionEntries(sessions: readonly SessionInfo[], current: string | null): SessionEntry[] {
  const entries = sessions
    .filter((session) => session.title.trim() !== '' || session.sessionId === current)
    .map((session) => ({ sessionId: session.sessionId, label: session.title.trim() || 'New session' }));
  if (current && !entries.some((entry) => entry.sessionId === current)) {
    entries.unshift({ sessionId: current, label: 'Current session' });
  }
  return entries;
}
