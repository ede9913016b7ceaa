// @vitest-environment jsdom
/** The review card's file list once answered: a file left as it is says what did not happen to it. */

import { describe, expect, it } from 'vitest';

import type { ChatAction, Item } from '../../src/shared/chatModel';
import { initialState, reduce } from '../../src/shared/chatModel';
import { renderItem } from '../../webview/components';

function drawn(actions: ChatAction[]): HTMLElement {
  const state = actions.reduce(reduce, initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default'));
  const item = state.items.find((candidate): candidate is Extract<Item, { kind: 'review' }> => candidate.kind === 'review');
  if (!item) throw new Error('no review card');
  return renderItem(item, { post: () => undefined, now: () => 0, openTools: new Set(), decided: () => undefined });
}

describe('the review card', () => {
  it('labels the files left out of an accepted review as not created and kept', () => {
    const files = [
      { path: '/ws/a.py', label: 'a.py', change: 'modify' as const },
      { path: '/ws/new.py', label: 'new.py', change: 'create' as const },
      { path: '/ws/old.py', label: 'old.py', change: 'delete' as const },
    ];
    const element = drawn([
      { type: 'reviewRequested', id: 'r1', toolUseId: 't1', title: 'ApplyPatch', reason: '', files },
      { type: 'reviewResolved', id: 'r1', state: 'accepted', outcome: 'Accepted.', leftOut: ['/ws/new.py', '/ws/old.py'] },
    ]);
    const labels = [...element.querySelectorAll('.review-files li')].map((li) => li.textContent);
    expect(labels).toEqual(['a.pymodified', 'new.pynot created', 'old.pykept']);
  });
});
