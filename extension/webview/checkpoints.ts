/**
 * The chat's checkpoint controls: Restore… and "N files changed" under a prompt, Redo on a restore's notice.
 * Buttons only: the host asks the questions and shows the diffs (checkpoints.ts).
 */

import type { Item } from '../src/shared/chatModel';
import { filesChangedLabel } from '../src/shared/checkpointView';
import type { ViewMessage } from '../src/shared/messages';
import { h } from './dom';

type Post = (message: ViewMessage) => void;

/** Under a prompt whose turn has checkpoints; null otherwise (an older sidecar, checkpoints off, a turn running). */
export function promptControls(item: Extract<Item, { kind: 'user' }>, post: Post): HTMLElement | null {
  if (!item.turn) return null;
  const changed = item.turn.changed.length;
  return h(
    'div',
    { class: 'checkpoint-controls' },
    h(
      'button',
      {
        class: 'link checkpoint-restore',
        title: 'Restore the code, the conversation or both to before this message',
        onclick: () => post({ type: 'restoreCheckpoint', itemId: item.id }),
      },
      'Restore…',
    ),
    changed > 0
      ? h(
          'button',
          {
            class: 'link checkpoint-changes',
            title: 'Show what this turn changed',
            onclick: () => post({ type: 'showTurnChanges', itemId: item.id }),
          },
          filesChangedLabel(changed),
        )
      : null,
  );
}

/** Redo on the notice of a restore (it restores what the restore replaced). */
export function redoControl(item: Extract<Item, { kind: 'notice' }>, post: Post): HTMLElement | null {
  if (!item.redo) return null;
  return h(
    'div',
    { class: 'card-actions' },
    h('button', { class: 'secondary checkpoint-redo', onclick: () => post({ type: 'redoRestore', itemId: item.id }) }, 'Redo'),
  );
}
