/**
 * Workspace hooks waiting for review (new, or changed since they were trusted): the person picks one, reads its
 * exact command, and trusts it. The sidecar records the trust in the user's settings (toolgate/hooks/trust); the
 * chat's banner, which lists waiting hooks among the settings problems, is refreshed after.
 */

import type { Notifier, QuickPickItem } from '../host';
import type { HookInfo, HooksListResult } from '../protocol.generated';

export interface HookReviewDeps {
  notifier: Notifier;
  client: {
    hooksList(sessionId: string): Promise<HooksListResult>;
    hooksTrust(sessionId: string, ids: string[]): Promise<HooksListResult>;
  };
  /** The open session (or a new one); undefined while no sidecar runs. */
  session(): Promise<string | undefined>;
  /** Ask the sidecar again for the banner's problems. */
  refresh(): Promise<void>;
}

interface HookPick extends QuickPickItem {
  hook: HookInfo;
}

function title(hook: HookInfo): string {
  return hook.matcher === '' || hook.matcher === '*' ? hook.event : `${hook.event} (${hook.matcher})`;
}

export async function reviewWaitingHooks(deps: HookReviewDeps): Promise<void> {
  const sessionId = await deps.session();
  if (!sessionId) {
    void deps.notifier.show('warning', 'toolgate: the sidecar is not running, so there are no hooks to review yet.');
    return;
  }
  const waiting = (await deps.client.hooksList(sessionId)).hooks.filter((hook) => hook.state === 'waiting');
  if (waiting.length === 0) {
    void deps.notifier.show('info', 'No workspace hook waits for review.');
    return;
  }
  const picked = await deps.notifier.pick<HookPick>(
    waiting.map((hook) => ({ label: title(hook), description: hook.id, detail: hook.command, hook })),
    { title: 'toolgate: workspace hooks waiting for review', placeholder: 'Pick one to read its command and trust it' },
  );
  if (!picked) return;
  const { hook } = picked;
  const trusted = await deps.notifier.confirm(
    `Trust this ${title(hook)} hook?`,
    `From ${hook.path ?? hook.source}, it runs:\n\n${hook.command}\n\nA later change to the command needs a new review.`,
    'Trust',
  );
  if (!trusted) return;
  await deps.client.hooksTrust(sessionId, [hook.id]);
  await deps.refresh();
  void deps.notifier.show('info', `The ${title(hook)} hook runs from now on: ${hook.command}`);
}
