/**
 * The chat header's sandbox element, as words: the sidecar says what the open session's Bash sandbox is
 * (`Settings.sandbox`), this only picks the short label and the tooltip. Pure: no DOM, no `vscode`.
 */

import type { SandboxStatus } from '../protocol';

export interface SandboxLabel {
  /** `data-state` of the element: on, off or unavailable. */
  state: SandboxStatus['state'];
  /** What the header line shows. */
  text: string;
  /** The sidecar's detail: which sandbox runs commands, its network rules, or why none runs and what to do. */
  title: string;
}

export function sandboxLabel(sandbox: SandboxStatus): SandboxLabel {
  const text = {
    // Words for the header's one line ("Ready · Claude Sonnet 4.5 · sandboxed").
    on: sandbox.autoAllow ? 'sandboxed, auto-allow' : 'sandboxed',
    off: 'not sandboxed',
    unavailable: 'sandbox unavailable',
  }[sandbox.state];
  const title =
    sandbox.state === 'on'
      ? `Bash commands run sandboxed: ${sandbox.detail}`
      : sandbox.state === 'off'
        ? `Bash commands run without a sandbox: ${sandbox.detail}`
        : `Bash commands run without a sandbox, and nothing is allowed on its account: ${sandbox.detail}`;
  return { state: sandbox.state, text, title };
}
