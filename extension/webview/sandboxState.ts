/**
 * The sandbox element of the chat header: one compact line (on / off / unavailable), the details in its tooltip.
 * Hidden while no session is open or the sidecar does not say.
 */

import type { SandboxStatus } from '../src/protocol';
import { sandboxLabel } from '../src/shared/sandboxView';
import { h } from './dom';

export function sandboxElement(): HTMLElement {
  return h('div', { class: 'sandbox-state', role: 'status', 'aria-label': 'Bash sandbox', hidden: true });
}

export function drawSandbox(element: HTMLElement, sandbox: SandboxStatus | null): void {
  element.hidden = sandbox === null;
  if (sandbox === null) return;
  const label = sandboxLabel(sandbox);
  element.dataset.state = label.state;
  element.title = label.title;
  element.textContent = label.text;
}
