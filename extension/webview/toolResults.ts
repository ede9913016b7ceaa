/**
 * A finished tool call's result as a person reads it (shared/toolResultView.ts decides what each result holds): a
 * Read as the file's highlighted lines, a change as a coloured diff, a search as files with their counts. What the
 * model got is kept word for word behind "As the model sees it".
 */

import type { DiffView, ReadView, ResultView, SearchView, TodosView } from '../src/shared/toolResultView';
import { h } from './dom';
import { highlightLine, languageOf } from './highlight';

/** The view's body, then the model's own text, folded. */
export function renderResultView(view: ResultView, modelText: string): HTMLElement {
  return h(
    'div',
    { class: `tool-view tool-view-${view.kind}` },
    renderBody(view),
    modelText
      ? h(
          'details',
          { class: 'model-text' },
          h('summary', { title: 'The result exactly as the model received it' }, 'As the model sees it'),
          h('pre', { class: 'tool-result' }, modelText),
        )
      : null,
  );
}

function renderRead(view: ReadView): HTMLElement[] {
  const language = languageOf(view.path);
  const width = String(view.lines[view.lines.length - 1]?.number ?? 0).length;
  const code = h(
    'pre',
    { class: 'code-lines' },
    h(
      'code',
      {},
      view.lines.map((line) =>
        h('span', { class: 'code-line' }, h('span', { class: 'line-number', 'aria-hidden': 'true' }, String(line.number)), ...highlightLine(line.text, language)),
      ),
    ),
  );
  // Through the CSSOM: the view's policy allows no inline style attribute.
  code.style.setProperty('--number-width', `${width}ch`);
  return [code, ...view.notes.map((note) => h('div', { class: 'tool-note' }, note))];
}

const DIFF_MARKS = { added: '+', removed: '−', context: ' ', hunk: '', file: '' } as const;

function renderDiff(view: DiffView): HTMLElement {
  return h(
    'pre',
    { class: 'diff-lines', role: 'group', 'aria-label': `Change: ${view.stat}` },
    view.lines.map((line) =>
      h(
        'span',
        { class: `diff-line diff-${line.kind}` },
        h('span', { class: 'diff-mark', 'aria-hidden': 'true' }, DIFF_MARKS[line.kind]),
        // Screen readers hear what the colour says.
        line.kind === 'added' || line.kind === 'removed' ? h('span', { class: 'visually-hidden' }, `${line.kind}: `) : null,
        line.text,
      ),
    ),
  );
}

function renderSearch(view: SearchView): HTMLElement[] {
  const list = h(
    'ul',
    { class: 'search-files' },
    view.groups.map((group) => {
      const name = [h('span', { class: 'search-path' }, group.path), group.count ? h('span', { class: 'search-count' }, String(group.count)) : null];
      if (group.lines.length === 0) return h('li', {}, ...name);
      return h('li', {}, h('details', {}, h('summary', {}, ...name), h('pre', { class: 'search-lines' }, group.lines.join('\n'))));
    }),
  );
  return [list, ...view.notes.map((note) => h('div', { class: 'tool-note' }, note))];
}

const TODO_ICONS = { pending: '○', in_progress: '◐', completed: '●' } as const;

/** A todo list's items, as the list under the transcript draws them (main.ts). */
export function renderTodoItems(todos: TodosView['todos']): HTMLElement {
  return h(
    'ul',
    { class: 'todo-items' },
    todos.map((todo) =>
      h(
        'li',
        { class: `todo todo-${todo.status}` },
        h('span', { class: 'todo-icon', 'aria-label': todo.status.replace('_', ' ') }, TODO_ICONS[todo.status]),
        h('span', {}, todo.content),
      ),
    ),
  );
}

function renderBody(view: ResultView): HTMLElement | HTMLElement[] {
  switch (view.kind) {
    case 'read':
      return renderRead(view);
    case 'diff':
      return renderDiff(view);
    case 'search':
      return renderSearch(view);
    case 'todos':
      return renderTodoItems(view.todos);
  }
}

/** A command too long for the card's one line, as a wrapped code block. */
export function renderCommand(command: string): HTMLElement {
  return h('pre', { class: 'tool-command' }, h('code', {}, command));
}
