/** One function per thing the transcript shows. Each returns a fresh element for an item. */

import type { RuleScope } from '../src/protocol';
import type { Item, ReviewFileView } from '../src/shared/chatModel';
import type { ViewMessage } from '../src/shared/messages';
import { isLongCommand, resultView } from '../src/shared/toolResultView';
import { toolBody, toolTiming } from '../src/shared/toolView';
import { askedByTitle, isAgentItem, renderAgentCard } from './agentCard';
import { promptControls, redoControl } from './checkpoints';
import { append, h } from './dom';
import { withCodeSpans, withoutCodeMarks } from './inlineCode';
import { renderMarkdown } from './markdown';
import { summaryControl } from './summarised';
import { renderCommand, renderResultView } from './toolResults';

export interface RenderContext {
  post(message: ViewMessage): void;
  now(): number;
  /** Tool cards whose details the person opened; kept across redraws of a card (live output redraws it). */
  openTools: Set<string>;
  /** A card was answered: the keyboard goes back to where the next thing is typed. */
  decided(): void;
}

const SCOPE_OPTIONS: { scope: RuleScope; label: string }[] = [
  { scope: 'session', label: 'This session' },
  { scope: 'local', label: 'This project, just me' },
  { scope: 'project', label: 'This project, shared' },
  { scope: 'user', label: 'All my projects' },
];

type ApprovalItem = Extract<Item, { kind: 'approval' }>;

/** `answered`: a tool card's approval once answered, drawn as a line of that card (shared/transcript.ts). */
export function renderItem(item: Item, ctx: RenderContext, answered?: ApprovalItem): HTMLElement {
  switch (item.kind) {
    case 'user':
      return h(
        'div',
        { class: `msg msg-user${item.queued ? ' queued' : ''}`, 'data-item': item.id },
        h('div', { class: 'msg-body' }, item.text),
        item.queued
          ? h('div', { class: 'msg-queued', role: 'status' }, 'Waits for the sidecar to be ready; sent as soon as it is.')
          : null,
        promptControls(item, ctx.post),
      );
    case 'assistant': {
      const body = h('div', { class: 'msg-body markdown' }, renderMarkdown(item.text, (text) => ctx.post({ type: 'copy', text })));
      if (item.streaming) body.appendChild(h('span', { class: 'cursor', 'aria-hidden': 'true' }, '▍'));
      return h('div', { class: `msg msg-assistant${item.streaming ? ' streaming' : ''}`, 'data-item': item.id }, body);
    }
    case 'tool':
      return isAgentItem(item)
        ? renderAgentCard(item, ctx, renderDuration(item, ctx.now()))
        : renderTool(item, ctx, answered);
    case 'approval':
      return renderApproval(item, ctx);
    case 'review':
      return renderReview(item, ctx);
    case 'notice':
      return h(
        'div',
        { class: `notice notice-${item.level}`, role: item.level === 'error' ? 'alert' : 'note', 'data-item': item.id },
        item.text,
        item.action === 'setApiKey'
          ? h(
              'div',
              { class: 'card-actions' },
              h('button', { class: 'secondary', onclick: () => ctx.post({ type: 'setApiKey' }) }, 'Set API Key'),
            )
          : null,
        redoControl(item, ctx.post),
        summaryControl(item.summary),
      );
  }
}

const TOOL_ICONS = { running: '◌', done: '✓', error: '✗' } as const;

/** The run time, and apart from it the time the call waited for the person (the run time ticks; main.ts). */
function renderDuration(item: Extract<Item, { kind: 'tool' }>, now: number): HTMLElement {
  const timing = toolTiming(item, now);
  return h(
    'span',
    {
      class: 'tool-duration',
      'data-started': item.startedAt,
      'data-waited': item.waitedMs,
      'data-running': timing.ticking,
      title: timing.waited ? `Ran ${timing.ran}; the rest of the time it ${timing.waited}.` : undefined,
    },
    h('span', { class: 'tool-ran' }, timing.waited === 'waiting for you' ? '' : timing.ran),
    timing.waited ? h('span', { class: 'tool-waited' }, timing.waited === 'waiting for you' ? timing.waited : ` · ${timing.waited}`) : null,
  );
}

function renderTool(item: Extract<Item, { kind: 'tool' }>, ctx: RenderContext, answered?: ApprovalItem): HTMLElement {
  const body = toolBody(item);
  const view = resultView(item);
  const details = h(
    'details',
    { class: `tool tool-${item.status}`, 'data-item': item.id, 'data-tool': item.toolName },
    h(
      'summary',
      {},
      h('span', { class: 'tool-icon', 'aria-label': item.status }, TOOL_ICONS[item.status]),
      h('span', { class: 'tool-name' }, item.toolName),
      h('span', { class: 'tool-summary', title: item.summary }, view?.headline ?? item.summary),
      view?.stat ? h('span', { class: 'tool-stat' }, view.stat) : null,
      renderDuration(item, ctx.now()),
      answered ? renderAnswer(answered) : null,
    ),
    isLongCommand(item.toolName, item.summary) ? renderCommand(item.summary) : null,
    view ? renderViewBody(view, item.resultSummary, body.result) : renderPlainBody(item, body),
  );
  // A running command's live output is worth seeing without a click.
  if (ctx.openTools.has(item.id) || (item.status === 'running' && item.output)) details.open = true;
  details.addEventListener('toggle', () => {
    if (details.open) ctx.openTools.add(item.id);
    else ctx.openTools.delete(item.id);
  });
  return details;
}

/**
 * A change's result line says what happened to the file (created, edited where; the rest, such as the person's own
 * edits to the proposal, is in the model's text); a read's or a search's says nothing the view does not.
 */
function renderViewBody(view: NonNullable<ReturnType<typeof resultView>>, summary: string, result: string): HTMLElement[] {
  return [
    ...(view.kind === 'diff' && summary ? [h('div', { class: 'tool-result-summary' }, summary)] : []),
    renderResultView(view, result),
  ];
}

function renderPlainBody(item: Extract<Item, { kind: 'tool' }>, body: ReturnType<typeof toolBody>): (HTMLElement | null)[] {
  return [
    body.output
      ? h(
          'div',
          { class: 'tool-output' },
          item.outputTrimmed ? h('div', { class: 'trimmed' }, 'Earlier output is not shown (only the last 64 KB are kept here).') : null,
          h('pre', { class: 'live' }, body.output),
        )
      : null,
    body.summary ? h('div', { class: 'tool-result-summary' }, body.summary) : null,
    body.result ? h('pre', { class: 'tool-result' }, body.result) : null,
    !body.output && !body.result && !body.summary && item.status === 'running'
      ? h('div', { class: 'tool-waiting' }, 'Running…')
      : null,
  ];
}

/** An answered approval as one line of its tool card: the answer, and why it was asked in the tooltip. */
function renderAnswer(item: ApprovalItem): HTMLElement {
  const reason = item.card.reason || 'No rule allows this call.';
  return h(
    'span',
    { class: `tool-answer approval-${item.state}`, 'data-item': item.id, title: `Why you were asked: ${withoutCodeMarks(reason)}` },
    item.outcome,
  );
}

function renderApproval(item: Extract<Item, { kind: 'approval' }>, ctx: RenderContext): HTMLElement {
  const titleId = `${item.id}-title`;
  const suggestions = item.card.suggestions ?? []; // none on a card drawn from history
  const card = h(
    'div',
    {
      // A child's card sits right under its Agent card (chatModel.ts), joined to it by the same border.
      class: `card approval approval-${item.state}${item.card.subagent ? ' approval-subagent' : ''}`,
      role: 'group',
      tabindex: item.state === 'pending' ? '-1' : undefined,
      'aria-labelledby': titleId,
      'data-item': item.id,
    },
    h('div', { class: 'card-title', id: titleId }, `Allow ${item.card.toolName}?`, askedByTitle(item.card)),
    h('div', { class: 'card-summary' }, h('code', {}, item.card.summary)),
  );
  const reason = item.card.reason || 'No rule allows this call.';
  if (item.state !== 'pending') {
    // Answered: the command and the answer; why it was asked is history (in the tooltip), not worth the room.
    card.appendChild(h('div', { class: 'card-outcome', title: `Why you were asked: ${withoutCodeMarks(reason)}` }, item.outcome));
    return card;
  }
  card.appendChild(h('div', { class: 'card-reason' }, h('span', { class: 'label' }, 'Why you are asked: '), ...withCodeSpans(reason)));
  const choose = (choice: Extract<ViewMessage, { type: 'approval' }>['choice']): void => {
    for (const button of card.querySelectorAll('button')) button.disabled = true;
    ctx.post({ type: 'approval', id: item.id, choice });
    ctx.decided();
  };

  // "Always allow": a suggested rule, which the person may edit (the sidecar checks it), and a scope. After a
  // refusal the card is drawn again with what was tried and why it was refused.
  const ruleError = item.draft ? item.error : ''; // an error without a draft is the mode switch's
  const always = h('div', { class: 'card-panel always', id: `${item.id}-always`, hidden: !ruleError });
  if (suggestions.length > 0) {
    const first = suggestions[0];
    const ruleInput = h('input', {
      type: 'text',
      class: 'rule-input',
      value: item.draft?.rule ?? first?.rule ?? '',
      spellcheck: 'false',
      'aria-label': 'Rule to add',
      'aria-invalid': ruleError ? 'true' : undefined,
    });
    const scope = h(
      'select',
      { class: 'scope', 'aria-label': 'Where to save the rule' },
      SCOPE_OPTIONS.map((option) =>
        h('option', { value: option.scope, selected: option.scope === (item.draft?.scope ?? first?.scope) }, option.label),
      ),
    );
    const suggestionLinks =
      suggestions.length > 1
        ? h(
            'div',
            { class: 'suggestions', role: 'group', 'aria-label': 'Suggested rules' },
            h('span', { class: 'panel-label' }, 'Suggested: '),
            suggestions.map((suggestion) =>
              h(
                'button',
                {
                  class: 'link suggestion',
                  title: 'Start from this rule',
                  onclick: () => {
                    ruleInput.value = suggestion.rule;
                    scope.value = suggestion.scope;
                    ruleInput.focus();
                  },
                },
                suggestion.rule,
              ),
            ),
          )
        : null;
    const save = (): void => {
      const rule = ruleInput.value.trim();
      if (!rule) {
        ruleInput.focus();
        return;
      }
      choose({ kind: 'always', rule, scope: scope.value as RuleScope });
    };
    ruleInput.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.isComposing) {
        event.preventDefault();
        save();
      }
    });
    ruleInput.id = `${item.id}-rule`;
    append(always, [
      h('label', { class: 'panel-label', for: ruleInput.id }, 'Always allow calls matching this rule (you may edit it):'),
      ruleInput,
      suggestionLinks,
      ruleError ? h('div', { class: 'card-error', role: 'alert' }, `Not saved: ${ruleError}`) : null,
      h('label', { class: 'scope-row' }, 'Save for ', scope),
      h('div', { class: 'card-actions' }, h('button', { class: 'primary', onclick: save }, 'Add rule and allow')),
    ]);
    // Back from a refusal: the person was typing here, so the rule is where the cursor belongs.
    if (ruleError && document.hasFocus()) requestAnimationFrame(() => ruleInput.focus());
  }

  const feedback = h('textarea', {
    class: 'feedback',
    rows: 2,
    placeholder: 'Optional: tell the agent why, or what to do instead. Enter denies, Shift+Enter adds a line.',
    'aria-label': 'Feedback for the agent',
  });
  const deny = h(
    'div',
    { class: 'card-panel deny', id: `${item.id}-deny`, hidden: true },
    feedback,
    h(
      'div',
      { class: 'card-actions' },
      h('button', { class: 'danger', onclick: () => choose({ kind: 'deny', feedback: feedback.value }) }, 'Deny'),
    ),
  );
  onSubmitKey(feedback, () => choose({ kind: 'deny', feedback: feedback.value }));

  const toggle = (panel: HTMLElement, other: HTMLElement, button: HTMLButtonElement): void => {
    other.hidden = true;
    panel.hidden = !panel.hidden;
    button.setAttribute('aria-expanded', String(!panel.hidden));
    if (!panel.hidden) openPanel(panel);
  };
  const alwaysButton = h(
    'button',
    { class: 'secondary', 'aria-expanded': String(!always.hidden), 'aria-controls': always.id },
    'Always allow…',
  );
  const denyButton = h('button', { class: 'secondary', 'aria-expanded': 'false', 'aria-controls': deny.id }, 'Deny…');
  alwaysButton.addEventListener('click', () => toggle(always, deny, alwaysButton));
  denyButton.addEventListener('click', () => toggle(deny, always, denyButton));

  card.append(
    h(
      'div',
      { class: 'card-actions' },
      h('button', { class: 'primary', onclick: () => choose({ kind: 'once' }) }, 'Allow once'),
      suggestions.length > 0 ? alwaysButton : null,
      item.card.offersAcceptEdits
        ? h(
            'button',
            {
              class: 'secondary accept-edits',
              title: ACCEPT_EDITS_TITLE,
              onclick: () => choose({ kind: 'acceptEdits' }),
            },
            'Allow, and accept edits',
          )
        : null,
      denyButton,
    ),
    ...(item.error && !item.draft ? [h('div', { class: 'card-error', role: 'alert' }, item.error)] : []),
    always,
    deny,
  );
  return card;
}

const ACCEPT_EDITS_TITLE =
  'Say yes to this, and switch this session to "Accept edits" mode: file changes inside the workspace then run ' +
  'without asking (the mode menu at the top switches back)';

/** The review editor's keybindings (package.json contributes.keybindings), as the person's platform writes them. */
const KEYS = /Mac/.test(navigator.platform)
  ? { accept: '⌘⌥Enter', reject: '⌘⌥R' }
  : { accept: 'Ctrl+Alt+Enter', reject: 'Ctrl+Alt+R' };

const CHANGE_LABELS: Record<ReviewFileView['change'], string> = { create: 'new', modify: 'modified', delete: 'deleted' };
/** A file left as it is: what did not happen to it. */
const LEFT_OUT_LABELS: Record<ReviewFileView['change'], string> = { create: 'not created', modify: 'unchanged', delete: 'kept' };

function renderReview(item: Extract<Item, { kind: 'review' }>, ctx: RenderContext): HTMLElement {
  const titleId = `${item.id}-title`;
  const files = h(
    'ul',
    { class: 'review-files' },
    item.files.map((file) =>
      h(
        'li',
        {},
        item.state === 'pending'
          ? h(
              'button',
              {
                class: 'link',
                title: `Show the diff of ${file.path}`,
                onclick: () => ctx.post({ type: 'showReview', id: item.id, path: file.path }),
              },
              file.label,
            )
          : h('span', { title: file.path }, file.label),
        file.leftOut
          ? h('span', { class: 'change change-left-out' }, LEFT_OUT_LABELS[file.change])
          : h('span', { class: `change change-${file.change}` }, CHANGE_LABELS[file.change]),
      ),
    ),
  );
  const card = h(
    'div',
    {
      class: `card review review-${item.state}`,
      role: 'group',
      tabindex: item.state === 'pending' ? '-1' : undefined,
      'aria-labelledby': titleId,
      'data-item': item.id,
    },
    h('div', { class: 'card-title', id: titleId }, item.title || 'Review proposed changes'),
    item.reason && item.state === 'pending'
      ? h('div', { class: 'card-reason' }, h('span', { class: 'label' }, 'Why you are asked: '), ...withCodeSpans(item.reason))
      : null,
    files,
  );
  if (item.state !== 'pending') {
    const why = item.reason ? `Why you were asked: ${withoutCodeMarks(item.reason)}` : undefined;
    card.appendChild(h('div', { class: 'card-outcome', title: why }, item.outcome));
    return card;
  }
  const feedback = h('textarea', {
    class: 'feedback',
    rows: 2,
    placeholder: 'Optional: tell the agent what to change. Enter rejects, Shift+Enter adds a line.',
    'aria-label': 'Feedback for the agent',
  });
  const rejectPanel = h('div', { class: 'card-panel reject', id: `${item.id}-reject`, hidden: true });
  const decide = (decision: 'accept' | 'acceptEdits' | 'reject'): void => {
    for (const button of card.querySelectorAll('button')) button.disabled = true;
    ctx.post({ type: 'review', id: item.id, decision, feedback: decision === 'reject' ? feedback.value : '' });
    ctx.decided();
  };
  onSubmitKey(feedback, () => decide('reject'));
  rejectPanel.append(
    feedback,
    h('div', { class: 'card-actions' }, h('button', { class: 'danger', onclick: () => decide('reject') }, 'Reject')),
  );
  const rejectButton = h(
    'button',
    { class: 'secondary', 'aria-expanded': 'false', 'aria-controls': rejectPanel.id },
    'Reject…',
  );
  rejectButton.addEventListener('click', () => {
    rejectPanel.hidden = !rejectPanel.hidden;
    rejectButton.setAttribute('aria-expanded', String(!rejectPanel.hidden));
    if (!rejectPanel.hidden) openPanel(rejectPanel);
  });
  card.append(
    h(
      'div',
      { class: 'card-hint' },
      'The diff is open in the editor: you may edit the proposal before accepting. In the diff, ' +
        `${KEYS.accept} accepts and ${KEYS.reject} rejects.`,
    ),
    h(
      'div',
      { class: 'card-actions' },
      h('button', { class: 'primary', onclick: () => decide('accept') }, 'Accept'),
      item.offersAcceptEdits
        ? h(
            'button',
            { class: 'secondary accept-edits', title: ACCEPT_EDITS_TITLE, onclick: () => decide('acceptEdits') },
            'Accept, and accept edits',
          )
        : null,
      rejectButton,
      h('button', { class: 'secondary', onclick: () => ctx.post({ type: 'showReview', id: item.id, path: null }) }, 'Show diff'),
    ),
    ...(item.error ? [h('div', { class: 'card-error', role: 'alert' }, item.error)] : []),
    rejectPanel,
  );
  return card;
}

/**
 * A card's panel (Deny…'s feedback, Reject…'s, Always allow…'s rule) just opened: its first field takes the keyboard
 * and the whole panel, its button included, scrolls into the visible part of the transcript (a card low in the view
 * would otherwise open its box below the edge).
 */
function openPanel(panel: HTMLElement): void {
  panel.querySelector<HTMLElement>('input, textarea, select')?.focus({ preventScroll: true });
  panel.scrollIntoView?.({ block: 'nearest' }); // (jsdom, in the unit tests, has no scrolling)
}

/** Enter in a feedback box sends it (Deny, Reject alike); Shift+Enter adds a line. */
function onSubmitKey(box: HTMLTextAreaElement, submit: () => void): void {
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
}
