/**
 * The Agent card: one Agent call drawn as a collapsible card with its child agent inside, live: the child's calls
 * (each with its status, and, while it waits for the person's approval, a link to the approval card), a grandchild's
 * calls nested under the call that started it, what the child says, its final answer, and the run's status (running,
 * done, stopped). Open while the child runs, folded once it ends. The model behind it is src/shared/agentCard.ts.
 * Also the part of an approval card's title that names the child who asks.
 */

import type { ApprovalCard, Item } from '../src/shared/chatModel';
import type { AgentRun, AgentStatus, ChildCall } from '../src/shared/agentCard';
import { ASKED_BY_SUBAGENT, agentCardView, subagentName } from '../src/shared/agentCard';
import type { RenderContext } from './components';
import { h } from './dom';
import { renderMarkdown } from './markdown';

type AgentItem = Extract<Item, { kind: 'tool' }> & { agent: NonNullable<Extract<Item, { kind: 'tool' }>['agent']> };

const STATUS_ICONS: Record<AgentStatus, string> = { running: '◌', done: '✓', stopped: '✗' };
const CALL_ICONS: Record<ChildCall['status'], string> = { running: '◌', done: '✓', error: '✗' };

/** Agent cards the person folded while their child ran: redrawn with each of the child's events, they stay folded. */
const foldedWhileRunning = new Set<string>();

export function isAgentItem(item: Extract<Item, { kind: 'tool' }>): item is AgentItem {
  return item.agent !== undefined;
}

/** `duration`: the call's times, drawn the way every tool card draws them. */
export function renderAgentCard(item: AgentItem, ctx: RenderContext, duration: HTMLElement): HTMLElement {
  const view = agentCardView(item, item.agent);
  const details = h(
    'details',
    { class: `tool agent-card tool-${item.status} agent-${view.status}`, 'data-item': item.id, 'data-tool': item.toolName },
    h(
      'summary',
      {},
      h('span', { class: 'tool-icon', 'aria-label': view.status }, STATUS_ICONS[view.status]),
      h('span', { class: 'tool-name' }, 'Agent'),
      h('span', { class: 'tool-summary', title: view.title }, view.title),
      h('span', { class: 'agent-status' }, view.statusLabel),
      duration,
    ),
    view.calls.length > 0
      ? renderCalls(view.calls, view.title)
      : view.status === 'running'
        ? h('div', { class: 'tool-waiting' }, 'Starting…')
        : null,
    view.text
      ? h(
          'div',
          { class: 'agent-answer markdown', 'aria-label': view.status === 'running' ? 'What the subagent says' : 'The subagent’s answer' },
          renderMarkdown(view.text, (text) => ctx.post({ type: 'copy', text })),
        )
      : null,
  );
  // Open while the child runs unless the person folded it; once it ends, folded unless the person opened it. (Setting
  // `open` here fires a toggle event too, later: it matches the default, so it records no choice of the person's.)
  const running = view.status === 'running';
  details.open = running ? !foldedWhileRunning.has(item.id) : ctx.openTools.has(item.id);
  details.addEventListener('toggle', () => {
    const choices = running ? foldedWhileRunning : ctx.openTools;
    if (details.open === running) choices.delete(item.id);
    else choices.add(item.id);
  });
  return details;
}

/** The child's calls, one line each; a call that started a grandchild has the grandchild's calls under it. */
function renderCalls(calls: readonly ChildCall[], title: string): HTMLElement {
  return h(
    'ol',
    { class: 'agent-calls', 'aria-label': `Calls of ${title}` },
    calls.map((call) =>
      h(
        'li',
        { class: `agent-call agent-call-${call.status}${call.waiting ? ' agent-call-waiting' : ''}`, 'data-call': call.id },
        h('span', { class: 'tool-icon', 'aria-label': call.status }, CALL_ICONS[call.status]),
        h('span', { class: 'tool-name' }, call.toolName),
        h('span', { class: 'tool-summary', title: call.summary }, call.summary),
        call.waiting
          ? waitingNote(call.approvalId)
          : call.resultSummary
            ? h('span', { class: 'agent-call-note', title: call.resultSummary }, call.resultSummary)
            : null,
        call.agent ? renderGrandchild(call.agent) : null,
      ),
    ),
  );
}

/** A grandchild (the child's own Agent call): its status, then its calls, nested under the call's line. */
function renderGrandchild(run: AgentRun): HTMLElement {
  const title = subagentName(run);
  return h(
    'div',
    { class: `agent-nested agent-${run.status}` },
    h('span', { class: 'agent-status' }, run.status === 'stopped' && run.stopReason ? `stopped: ${run.stopReason}` : run.status),
    run.calls.length > 0 ? renderCalls(run.calls, title) : null,
  );
}

/** The waiting call's note is a button that takes the keyboard to the approval card it waits on (drawn below). */
function waitingNote(approvalId: string | undefined): HTMLElement {
  const text = 'waits for your approval below';
  if (approvalId === undefined) return h('span', { class: 'agent-call-note' }, text);
  return h('button', { class: 'link agent-call-note agent-call-goto', title: 'Go to the approval card', onclick: () => focusApproval(approvalId) }, text);
}

function focusApproval(approvalId: string): void {
  const card = [...document.querySelectorAll<HTMLElement>('.approval[data-item]')].find((element) => element.dataset.item === approvalId);
  card?.focus(); // focusing scrolls it into view; from the card, Tab reaches its choices
}

/** An approval card's title when a child agent asks: which one, so the person knows whose call it is. */
export function askedByTitle(card: ApprovalCard): HTMLElement | null {
  const child = card.subagent;
  if (!child) return null;
  return h('span', { class: 'card-subagent' }, ASKED_BY_SUBAGENT, h('strong', {}, subagentName(child)));
}
