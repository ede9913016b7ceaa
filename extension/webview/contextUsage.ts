/**
 * The context element of the chat header: how full the context window is and what the session cost, in one line
 * (the last request's details in its tooltip). Hidden until the first request of the open session reports.
 */

import type { UsageReport } from '../src/protocol';
import { usageLabel } from '../src/shared/usageView';
import { h } from './dom';

export function usageElement(): HTMLElement {
  return h('div', { class: 'context-usage', role: 'status', 'aria-label': 'Context window and cost', hidden: true });
}

export function drawUsage(element: HTMLElement, usage: UsageReport | null): void {
  element.hidden = usage === null;
  if (usage === null) return;
  const label = usageLabel(usage);
  element.title = label.title;
  element.textContent = label.text;
}
