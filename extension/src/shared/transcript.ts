/**
 * What the transcript draws, item by item: an approval that was answered becomes a line of its tool's card (the
 * call and its answer are one thing to read), so it takes no card of its own. A waiting approval stays a card: it
 * asks for the person's attention, and its tool card may be far above. Pure.
 */

import type { Item } from './chatTypes';

type ApprovalItem = Extract<Item, { kind: 'approval' }>;

export interface TranscriptEntry {
  item: Item;
  /** The tool card's answered approval, drawn inside it. */
  answered?: ApprovalItem;
}

export function transcriptEntries(items: readonly Item[]): TranscriptEntry[] {
  const tools = new Set(items.filter((item) => item.kind === 'tool').map((item) => item.id));
  const answers = new Map<string, ApprovalItem>();
  for (const item of items) {
    if (item.kind === 'approval' && item.state !== 'pending' && tools.has(item.card.toolUseId)) {
      answers.set(item.card.toolUseId, item);
    }
  }
  const folded = new Set([...answers.values()]);
  return items
    .filter((item) => !(item.kind === 'approval' && folded.has(item)))
    .map((item) => {
      const answered = item.kind === 'tool' ? answers.get(item.id) : undefined;
      return answered ? { item, answered } : { item };
    });
}
