// @vitest-environment jsdom
/** The changes bar as the webview draws it: its buttons post the file's version and the hunk's index, the keyboard
 * keeps its place across a redraw, and Escape leaves it for the composer. */

import { describe, expect, it } from 'vitest';

import type { BarFile, ChangesBar } from '../../src/shared/changesBar';
import type { ViewMessage } from '../../src/shared/messages';
import { changesBarElement, drawChangesBar, focusChangesBar } from '../../webview/changesBar';

const FILE: BarFile = {
  path: 'src/a.py',
  status: 'modified',
  added: 2,
  removed: 1,
  version: 'v1',
  conflict: null,
  hunks: [
    { line: 2, added: 1, removed: 1, preview: 'B' },
    { line: 9, added: 1, removed: 0, preview: 'added' },
  ],
};

function setup(bar: ChangesBar) {
  const posted: ViewMessage[] = [];
  let composer = 0;
  const element = changesBarElement(() => composer++);
  document.body.appendChild(element);
  drawChangesBar(element, bar, (message) => posted.push(message));
  return { element, posted, composerFocused: () => composer };
}

const click = (element: HTMLElement, selector: string) => element.querySelector<HTMLButtonElement>(selector)?.click();

describe('the changes bar in the view', () => {
  it('is hidden with nothing to show, and the keybinding then goes elsewhere', () => {
    const { element } = setup({ files: [], notice: null });
    expect(element.hidden).toBe(true);
    expect(focusChangesBar(element)).toBe(false);
  });

  it('posts a file’s and a hunk’s Keep and Undo with the version it was drawn at', () => {
    const { element, posted } = setup({ files: [FILE], notice: null });
    expect(element.querySelector('.changes-summary')?.textContent).toBe('1 file changed +2 −1');
    click(element, '.changes-undo');
    click(element, '.changes-hunk:nth-child(2) .changes-keep-hunk');
    click(element, '.changes-undo-all');
    expect(posted).toEqual([
      { type: 'changes', op: 'undo', path: 'src/a.py', version: 'v1' },
      { type: 'changes', op: 'keep', path: 'src/a.py', version: 'v1', hunk: 1 },
      { type: 'changes', op: 'undoAll' },
    ]);
  });

  it('keeps the keyboard on the same button across a redraw, and Escape goes back to the composer', () => {
    const { element, posted, composerFocused } = setup({ files: [FILE], notice: null });
    expect(focusChangesBar(element)).toBe(true);
    element.querySelector<HTMLButtonElement>('.changes-file .changes-keep')?.focus();
    const notice = { level: 'info' as const, text: 'Undid a change in src/a.py.', redo: '000009' };
    drawChangesBar(element, { files: [FILE], notice }, (message) => posted.push(message));
    expect((document.activeElement as HTMLElement).dataset.focusKey).toBe('keep:src/a.py');
    expect(element.querySelector('.changes-notice')?.textContent).toContain('Undid a change in src/a.py.');
    document.activeElement?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(composerFocused()).toBe(1);
  });
});
