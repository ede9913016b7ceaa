import { describe, expect, it } from 'vitest';

import type { SessionInfo } from '../src/protocol';
import { sessionEntries } from '../src/shared/sessions';

const session = (sessionId: string, title: string): SessionInfo => ({
  sessionId,
  title,
  workspace: '/ws',
  mode: 'default',
  reviewEdits: 'when_asking',
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  live: false,
  turns: 0,
});

describe('the session picker', () => {
  it('lists sessions by the name their first message gave them, and not the ones nobody wrote in', () => {
    const sessions = [session('s3', ''), session('s2', 'Fix the greeting'), session('s1', '  ')];
    expect(sessionEntries(sessions, null)).toEqual([{ sessionId: 's2', label: 'Fix the greeting' }]);
  });

  it('always lists the session on screen, empty or not yet listed', () => {
    const sessions = [session('s3', ''), session('s2', 'Fix the greeting')];
    expect(sessionEntries(sessions, 's3').map((entry) => entry.label)).toEqual(['New session', 'Fix the greeting']);
    expect(sessionEntries(sessions, 's9')[0]).toEqual({ sessionId: 's9', label: 'Current session' });
  });
});
