/**
 * The banner for broken settings files and unusable rules: what they are, a way to open each file, and what follows
 * from them. It folds to one line, and unfolds by itself when the problems change.
 */

import type { ChatState } from '../src/shared/chatModel';
import type { ViewMessage } from '../src/shared/messages';
import { clear, h } from './dom';

export function settingsProblemsElement(): HTMLElement {
  return h('section', {
    class: 'settings-problems',
    role: 'alert',
    'aria-label': 'Problems in the permission settings',
    hidden: true,
  });
}

/** The problems the person folded the banner on; it unfolds by itself when they change. */
let foldedProblems = '';

export function drawSettingsProblems(
  settingsProblems: HTMLElement,
  problems: ChatState['settingsProblems'],
  post: (message: ViewMessage) => void,
): void {
  settingsProblems.hidden = problems.length === 0;
  clear(settingsProblems);
  if (problems.length === 0) return;
  const title =
    problems.length === 1 ? 'A permission setting is not in force' : `${problems.length} permission settings are not in force`;
  const key = JSON.stringify(problems.map((problem) => problem.text));
  const folded = foldedProblems === key;
  settingsProblems.dataset.folded = String(folded);
  const fold = h(
    'button',
    {
      class: 'icon fold',
      'aria-expanded': String(!folded),
      title: folded ? 'Show the details' : 'Fold this warning to one line (it opens again when the problems change)',
      onclick: () => {
        foldedProblems = folded ? '' : key;
        drawSettingsProblems(settingsProblems, problems, post);
        settingsProblems.querySelector<HTMLButtonElement>('button.fold')?.focus();
      },
    },
    folded ? 'Show' : 'Hide',
  );
  settingsProblems.append(h('div', { class: 'problems-title' }, h('span', { title }, `⚠ ${title}`), fold));
  if (folded) return;
  settingsProblems.append(
    h(
      'ul',
      {},
      problems.map((problem, index) =>
        h(
          'li',
          {},
          problem.text,
          problem.file
            ? h(
                'button',
                {
                  class: 'link',
                  title: `Open ${problem.file}${problem.line ? ` at line ${problem.line}` : ''}`,
                  onclick: () => post({ type: 'openSettingsProblem', index }),
                },
                'Open file',
              )
            : null,
        ),
      ),
    ),
    h(
      'div',
      { class: 'problems-hint' },
      'These rules are not applied; while a file is broken, calls it would allow are asked about instead. ' +
        'A session reads the files when it starts: after a fix, start a new session.',
    ),
    h(
      'div',
      { class: 'card-actions' },
      h('button', { class: 'secondary', onclick: () => post({ type: 'openPermissionRules' }) }, 'Permission rules…'),
    ),
  );
}
