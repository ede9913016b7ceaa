// @vitest-environment jsdom
/** A compaction's notice folds its summary; summarised items are marked for sight and for screen readers. */

import { describe, expect, it } from 'vitest';

import { renderItem } from '../../webview/components';
import { markSummarised } from '../../webview/summarised';

const context = { post: () => undefined, now: () => 0, openTools: new Set<string>(), decided: () => undefined };

describe('summarised turns', () => {
  it('folds the summary under the compaction notice, rendered as Markdown', () => {
    const notice = renderItem({ kind: 'notice', id: 'n1', level: 'info', text: 'Compacted.', summary: '## Goal\nparse it' }, context);
    const details = notice.querySelector('details.compaction-summary');
    expect(details?.hasAttribute('open')).toBe(false);
    expect(details?.querySelector('summary')?.textContent).toBe('Show the summary');
    expect(details?.querySelector('.md-heading')?.textContent).toBe('Goal');
    const plain = renderItem({ kind: 'notice', id: 'n2', level: 'info', text: 'Cleared.' }, context);
    expect(plain.querySelector('details')).toBeNull();
  });

  it('marks and unmarks an item', () => {
    const element = document.createElement('div');
    markSummarised(element, true);
    expect(element.dataset.summarised).toBe('true');
    expect(element.getAttribute('aria-description')).toContain('only through the summary');
    markSummarised(element, false);
    expect(element.hasAttribute('data-summarised')).toBe(false);
    expect(element.hasAttribute('aria-description')).toBe(false);
  });
});
