/**
 * The changes bar just above the composer: "N files changed +a −b", each file with Open / Keep / Undo and, unfolded,
 * each hunk with Keep / Undo; Undo all and Keep all; the notice of the last undo (with Redo, and a conflict's keep
 * mine / take the undo / open a merge) shown here, where the person clicked. Buttons only: the host asks the
 * sidecar (checkpoints/changesBar.ts). Every control is a button (Tab reaches it); Escape goes back to the composer.
 */

import type { BarFile, BarNotice, ChangesBar, ChangesOp } from '../src/shared/changesBar';
import { changesSummary, fileCounts } from '../src/shared/changesBar';
import type { ViewMessage } from '../src/shared/messages';
import { clear, h } from './dom';

type Post = (message: ViewMessage) => void;

export function changesBarElement(backToComposer: () => void): HTMLElement {
  const element = h('section', { class: 'changes-bar', 'aria-label': 'The agent’s changes', hidden: true });
  element.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.stopPropagation(); // Escape here leaves the bar; it does not interrupt the turn
    backToComposer();
  });
  return element;
}

/** Redraws only when the bar changed (a redraw would take the keyboard's place away, so it is put back). */
export function drawChangesBar(element: HTMLElement, bar: ChangesBar, post: Post): void {
  const key = JSON.stringify(bar);
  if (element.dataset.drawn === key) return;
  element.dataset.drawn = key;
  const focused = document.activeElement instanceof HTMLElement && element.contains(document.activeElement)
    ? document.activeElement.dataset.focusKey
    : undefined;
  const unfolded = new Set([...element.querySelectorAll<HTMLDetailsElement>('details[open]')].map((d) => d.dataset.path));
  clear(element);
  element.hidden = bar.files.length === 0 && bar.notice === null;
  if (bar.notice) element.appendChild(noticeLine(bar.notice, post));
  if (bar.files.length > 0) {
    element.append(
      h(
        'div',
        { class: 'changes-title' },
        h('span', { class: 'changes-summary' }, changesSummary(bar.files)),
        button('Undo all', 'changes-undo-all', () => post({ type: 'changes', op: 'undoAll' }), 'undoAll', 'Undo every change listed here (your own edits stay)'),
        button('Keep all', 'changes-keep-all', () => post({ type: 'changes', op: 'keepAll' }), 'keepAll', 'Accept every change listed here'),
      ),
      h('ul', { class: 'changes-files' }, bar.files.map((file) => fileRow(file, post, unfolded.has(file.path)))),
    );
  }
  if (focused) {
    const same = [...element.querySelectorAll<HTMLElement>('[data-focus-key]')].find((candidate) => candidate.dataset.focusKey === focused);
    (same ?? firstButton(element))?.focus();
  }
}

/** The keybinding's target: the bar's first button (nothing when the bar is empty). */
export function focusChangesBar(element: HTMLElement): boolean {
  const target = firstButton(element);
  target?.focus();
  return target !== null;
}

function firstButton(element: HTMLElement): HTMLElement | null {
  return element.querySelector<HTMLElement>('button, summary');
}

function fileRow(file: BarFile, post: Post, open: boolean): HTMLElement {
  const on = (op: ChangesOp, hunk?: number) => () =>
    post({ type: 'changes', op, path: file.path, version: file.version, ...(hunk === undefined ? {} : { hunk }) });
  const key = (what: string) => `${what}:${file.path}`;
  const actions = file.conflict
    ? [
        button('Keep mine', 'changes-keep', on('keep'), key('keep'), 'Keep the file as it is now'),
        button('Take the undo', 'changes-take-undo', on('takeUndo'), key('takeUndo'), 'Undo the agent’s change; where it meets your edits, the undo wins'),
        button('Open merge', 'changes-merge', on('merge'), key('merge'), 'Compare the undo with your file and merge by hand'),
      ]
    : [
        button('Keep', 'changes-keep', on('keep'), key('keep'), `Accept the agent’s changes in ${file.path}`),
        button('Undo', 'changes-undo', on('undo'), key('undo'), `Undo the agent’s changes in ${file.path} (your own edits stay)`),
      ];
  const head = h(
    'div',
    { class: 'changes-file-head' },
    button(file.path, 'link changes-open', on('open'), key('open'), 'Open the agent’s changes to this file as a diff'),
    h('span', { class: file.conflict ? 'changes-counts changes-conflict' : 'changes-counts', title: file.conflict ?? '' }, fileCounts(file)),
    ...actions,
  );
  const item = h('li', { class: 'changes-file', 'data-path': file.path }, head);
  if (file.hunks.length > 1) {
    const details = h(
      'details',
      { class: 'changes-hunks', 'data-path': file.path, open },
      h('summary', { 'data-focus-key': key('hunks') }, `${file.hunks.length} changes`),
      h(
        'ul',
        {},
        file.hunks.map((hunk, index) =>
          h(
            'li',
            { class: 'changes-hunk' },
            h('span', { class: 'changes-hunk-where' }, `line ${hunk.line}: +${hunk.added} −${hunk.removed}`),
            h('code', { class: 'changes-hunk-preview' }, hunk.preview),
            button('Keep', 'changes-keep-hunk', on('keep', index), key(`keep${index}`), `Accept this change (line ${hunk.line})`),
            button('Undo', 'changes-undo-hunk', on('undo', index), key(`undo${index}`), `Undo this change (line ${hunk.line})`),
          ),
        ),
      ),
    );
    item.appendChild(details);
  }
  return item;
}

function noticeLine(notice: BarNotice, post: Post): HTMLElement {
  return h(
    'div',
    { class: `changes-notice notice-${notice.level}`, role: notice.level === 'error' ? 'alert' : 'status' },
    h('span', {}, notice.text),
    notice.redo ? button('Redo', 'changes-redo', () => post({ type: 'changes', op: 'redo' }), 'redo', 'Take the undo back') : null,
    button('Dismiss', 'changes-dismiss', () => post({ type: 'changes', op: 'dismiss' }), 'dismiss', 'Hide this notice'),
  );
}

function button(label: string, cls: string, onclick: () => void, focusKey: string, title: string): HTMLElement {
  const classes = cls.startsWith('link') ? cls : `secondary ${cls}`;
  return h('button', { class: classes, onclick, title, 'data-focus-key': focusKey }, label);
}
