/**
 * Turns the model sees only through a summary (a compaction): their items are marked, and the compaction's notice
 * folds the summary the model went on from.
 */

import { h } from './dom';
import { renderMarkdown } from './markdown';

const SUMMARISED_TITLE = 'Summarised: the model now sees this part of the conversation only through the summary below it.';

/** Mark (or unmark) a transcript item as summarised; cheap enough to run on every draw. */
export function markSummarised(element: HTMLElement, summarised: boolean): void {
  if ((element.dataset.summarised === 'true') === summarised) return;
  if (summarised) {
    element.dataset.summarised = 'true';
    element.setAttribute('aria-description', SUMMARISED_TITLE);
  } else {
    delete element.dataset.summarised;
    element.removeAttribute('aria-description');
  }
}

/** A compaction notice's summary, folded (it is long, and what the model reads rather than the person). */
export function summaryControl(summary: string | undefined): HTMLElement | null {
  if (summary === undefined) return null;
  return h(
    'details',
    { class: 'compaction-summary' },
    h('summary', {}, 'Show the summary'),
    h('div', { class: 'markdown' }, renderMarkdown(summary)),
  );
}
