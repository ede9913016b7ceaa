// @vitest-environment jsdom
/** The composer's chips as the webview draws them: a problems mention shows the count the host gave its item, and
 * what is sent is the mention alone (the sidecar asks the editor for the problems). */

import { describe, expect, it } from 'vitest';

import type { CompletionItem } from '../../src/shared/composer';
import type { ViewMessage } from '../../src/shared/messages';
import { ComposerCompletion } from '../../webview/composer';

const PROBLEMS: CompletionItem = {
  kind: 'problems',
  label: 'problems',
  detail: '3 in the workspace, 1 errors',
  chip: 'Problems (3)',
  attachment: { kind: 'problems' },
};

// jsdom lays nothing out, so it has no scrolling (the list scrolls its selected row into view).
Element.prototype.scrollIntoView = () => undefined;

describe('the composer chips', () => {
  it('draws a chosen problems mention with its count and sends only the mention', () => {
    const posted: ViewMessage[] = [];
    const input = document.createElement('textarea');
    document.body.appendChild(input);
    const completion = new ComposerCompletion(input, (message) => posted.push(message));
    document.body.append(completion.list, completion.chips);
    input.value = 'fix @prob';
    input.setSelectionRange(input.value.length, input.value.length);
    input.dispatchEvent(new Event('input'));
    expect(posted).toEqual([{ type: 'complete', requestId: 1, query: 'prob' }]);

    completion.hostMessage({ type: 'completions', requestId: 1, items: [PROBLEMS] });
    completion.list.querySelector('li')?.dispatchEvent(new MouseEvent('mousedown', { cancelable: true }));
    expect(input.value).toBe('fix @problems ');
    expect([...completion.chips.querySelectorAll('.chip')].map((chip) => chip.firstChild?.textContent)).toEqual(['Problems (3)']);
    expect(completion.take()).toEqual([{ kind: 'problems' }]);
  });
});
