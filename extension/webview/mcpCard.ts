/**
 * The chat's MCP approval cards (shared/mcpCard.ts decides what they say): a server waiting for its first approval
 * shows what it runs, a server whose tools changed shows what changed; Approve and Not now. Not now folds a card to
 * one line that opens it again. The host asks the sidecar (mcpView.ts); this only draws and posts.
 */

import type { McpCard } from '../src/shared/mcpCard';
import { cardExplanation, cardTitle, changeSummary, diffLines, toolChanges } from '../src/shared/mcpCard';
import type { ViewMessage } from '../src/shared/messages';
import { clear, h } from './dom';

type Post = (message: ViewMessage) => void;

const DIFF_SIGNS = { added: '+', removed: '-', context: ' ' } as const;

export function mcpCardsElement(): HTMLElement {
  return h('section', { class: 'mcp-cards', 'aria-label': 'MCP servers waiting for your approval', hidden: true });
}

/** Redraws only when the cards changed (a redraw would take the keyboard's place away). */
export function drawMcpCards(element: HTMLElement, cards: readonly McpCard[], post: Post, answered: () => void): void {
  const key = JSON.stringify(cards);
  if (element.dataset.drawn === key) return;
  element.dataset.drawn = key;
  const focusedServer = document.activeElement?.closest<HTMLElement>('.mcp-card')?.dataset.server;
  clear(element);
  element.hidden = cards.length === 0;
  for (const card of cards) element.appendChild(card.folded ? foldedCard(card, post) : fullCard(card, post, answered));
  // The card the keyboard was on was redrawn: the keyboard stays on it.
  if (focusedServer) element.querySelector<HTMLElement>(`.mcp-card[data-server="${CSS.escape(focusedServer)}"]`)?.focus();
}

function foldedCard(card: McpCard, post: Post): HTMLElement {
  return h(
    'div',
    { class: 'mcp-card mcp-card-folded', 'data-server': card.name },
    h(
      'button',
      { class: 'link', 'aria-expanded': 'false', onclick: () => post({ type: 'mcpCard', name: card.name, choice: 'reopen' }) },
      `${cardTitle(card)} — review`,
    ),
  );
}

function fullCard(card: McpCard, post: Post, answered: () => void): HTMLElement {
  const titleId = `mcp-${card.name}-title`;
  const element = h(
    'div',
    {
      class: `card mcp-card mcp-card-${card.state}`,
      role: 'group',
      tabindex: card.state === 'pending' ? '-1' : undefined,
      'aria-labelledby': titleId,
      'data-server': card.name,
      'data-item': `mcp:${card.name}`,
    },
    h('div', { class: 'card-title', id: titleId }, cardTitle(card)),
  );
  if (card.state === 'approved' || card.state === 'failed') {
    element.appendChild(h('div', { class: 'card-outcome', role: 'status' }, card.outcome));
    return element;
  }
  const choose = (choice: 'approve' | 'notNow'): void => {
    for (const button of element.querySelectorAll('button')) button.disabled = true;
    post({ type: 'mcpCard', name: card.name, choice });
    answered();
  };
  const pending = card.state === 'pending';
  // The choices come first after the title: Tab from the focused card reaches Approve at once.
  element.append(
    h(
      'div',
      { class: 'card-actions' },
      h('button', { class: 'primary', disabled: !pending, onclick: () => choose('approve') }, pending ? 'Approve' : 'Approving…'),
      h('button', { class: 'secondary', disabled: !pending, onclick: () => choose('notNow') }, 'Not now'),
    ),
    card.kind === 'new' ? whatRuns(card) : whatChanged(card),
    h('div', { class: 'card-reason' }, cardExplanation(card)),
  );
  return element;
}

function whatRuns(card: McpCard): HTMLElement {
  const label = card.transport !== 'stdio' ? 'It connects to: ' : 'It runs: ';
  return h('div', { class: 'card-summary' }, h('span', { class: 'label' }, label), h('code', {}, card.command));
}

function whatChanged(card: McpCard): HTMLElement {
  const changes = toolChanges(card.changedTools, card.diff);
  const list = h(
    'ul',
    { class: 'mcp-changes' },
    changes.map((change) =>
      h(
        'li',
        { 'data-change': change.change },
        changeSummary(change),
        change.description
          ? h(
              'div',
              { class: 'mcp-description' },
              h('div', { class: 'diff-removed' }, `was: ${change.description.before}`),
              h('div', { class: 'diff-added' }, `now: ${change.description.after}`),
            )
          : null,
      ),
    ),
  );
  const diff = h(
    'pre',
    { class: 'mcp-diff' },
    diffLines(card.diff).map((line) =>
      h('div', { class: `diff-${line.kind}` }, line.kind === 'hunk' ? line.text : `${DIFF_SIGNS[line.kind]}${line.text}`),
    ),
  );
  return h('div', { class: 'mcp-change' }, list, h('details', {}, h('summary', {}, 'The whole change'), diff));
}
