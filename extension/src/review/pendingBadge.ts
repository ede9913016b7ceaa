/** The chat view's badge: how many approvals and reviews wait for an answer, over every source that has some. */

import type { ChatPresence } from '../chat/chatStore';

export class PendingBadge {
  private readonly sources: { readonly pendingCount: number }[] = [];

  constructor(private readonly presence: Pick<ChatPresence, 'setBadge'>) {}

  /** Count `source`'s pending answers too. */
  track(...sources: { readonly pendingCount: number }[]): void {
    this.sources.push(...sources);
  }

  /** A source's count changed: draw the total. */
  readonly update = (): void => {
    const count = this.sources.reduce((total, source) => total + source.pendingCount, 0);
    this.presence.setBadge(count, count === 1 ? 'toolgate is waiting for your answer' : `toolgate is waiting for ${count} answers`);
  };
}
