/**
 * Approval requests from the sidecar (`toolgate/approval/request`): each becomes a card in the chat with Allow
 * once, Always allow (a suggested rule, in a scope the person picks) and Deny (with optional feedback). When the chat
 * is hidden, a notification offers the same choices; whichever is answered first wins. Nothing here takes focus
 * from the editor: a card is added where the person can reach it, and a notification waits in its corner.
 */

import type { ChatPresence, ChatStore } from './chatStore';
import type { CancellationLike, Disposable, Notifier, QuickPickItem } from './host';
import type { ApprovalAnswer, ApprovalRequestParams, RuleScope, RuleSuggestion } from './protocol';
import { RULE_SCOPES } from './protocol';
import type { ApprovalChoice } from './shared/messages';

export const SCOPE_LABELS: Record<RuleScope, string> = {
  session: 'This session only',
  local: 'This project, just for me (.toolgate/settings.local.json)',
  project: 'This project, shared (.toolgate/settings.json)',
  user: 'All my projects (user settings)',
};

/** The answer the sidecar gets for a choice. Feedback is trimmed; empty feedback is left out. */
export function answerForChoice(choice: ApprovalChoice): ApprovalAnswer {
  switch (choice.kind) {
    case 'once':
      return { decision: 'allow' };
    case 'always':
      return { decision: 'allow', remember: { rule: choice.rule.trim(), scope: choice.scope } };
    case 'deny': {
      const feedback = choice.feedback.trim();
      return feedback ? { decision: 'deny', feedback } : { decision: 'deny' };
    }
  }
}

/** What the card says once answered. */
export function outcomeForChoice(choice: ApprovalChoice): string {
  switch (choice.kind) {
    case 'once':
      return 'Allowed once.';
    case 'always':
      return `Allowed. From now on ${choice.rule} is allowed (${SCOPE_LABELS[choice.scope].split(' (')[0]?.toLowerCase()}).`;
    case 'deny': {
      const feedback = choice.feedback.trim();
      return feedback ? `Denied, with feedback: ${feedback}` : 'Denied.';
    }
  }
}

interface Pending {
  id: string;
  params: ApprovalRequestParams;
  resolve: (answer: ApprovalAnswer) => void;
  notifying: boolean;
  subscriptions: Disposable[];
}

export class ApprovalBroker implements Disposable {
  private readonly pending = new Map<string, Pending>();
  private counter = 0;
  private readonly visibility: Disposable;

  constructor(
    private readonly store: ChatStore,
    private readonly presence: ChatPresence,
    private readonly notifier: Notifier,
    private readonly onPendingChanged: () => void = () => undefined,
  ) {
    // A card that was waiting in a visible chat needs a notification once the chat is hidden.
    this.visibility = presence.onDidChangeVisibility((visible) => {
      if (!visible) for (const request of this.pending.values()) this.notify(request);
    });
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Handle one `toolgate/approval/request`; resolves with the person's answer, or a denial if cancelled. */
  request(params: ApprovalRequestParams, token?: CancellationLike): Promise<ApprovalAnswer> {
    const id = `a${++this.counter}`;
    return new Promise<ApprovalAnswer>((resolve) => {
      const entry: Pending = { id, params, resolve, notifying: false, subscriptions: [] };
      this.pending.set(id, entry);
      this.store.dispatch({
        type: 'approvalRequested',
        id,
        toolUseId: params.toolUseId,
        toolName: params.toolName,
        summary: params.summary,
        reason: params.reason,
        suggestions: validSuggestions(params.suggestions),
      });
      this.onPendingChanged();
      if (token) {
        if (token.isCancellationRequested) {
          this.cancel(id);
          return;
        }
        entry.subscriptions.push(token.onCancellationRequested(() => this.cancel(id)));
      }
      if (!this.presence.isVisible()) this.notify(entry);
    });
  }

  /** An answer from the chat card (or the notification). A second answer to the same request is ignored. */
  answer(id: string, choice: ApprovalChoice): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.settle(entry, answerForChoice(choice), choice.kind === 'deny' ? 'denied' : 'allowed', outcomeForChoice(choice));
    return true;
  }

  /** The sidecar withdrew the request (the turn was interrupted, or it disconnected). */
  cancel(id: string): void {
    const entry = this.pending.get(id);
    if (entry) this.settle(entry, { decision: 'deny' }, 'cancelled', 'Withdrawn: the turn ended before an answer.');
  }

  /** Every open request is withdrawn, for example because the sidecar stopped. */
  cancelAll(): void {
    for (const id of [...this.pending.keys()]) this.cancel(id);
  }

  dispose(): void {
    this.cancelAll();
    this.visibility.dispose();
  }

  private settle(entry: Pending, answer: ApprovalAnswer, state: 'allowed' | 'denied' | 'cancelled', outcome: string): void {
    this.pending.delete(entry.id);
    for (const subscription of entry.subscriptions) subscription.dispose();
    this.store.dispatch({ type: 'approvalResolved', id: entry.id, state, outcome });
    this.onPendingChanged();
    entry.resolve(answer);
  }

  /** The notification fallback: the same three choices, without taking focus from the editor. */
  private notify(entry: Pending): void {
    if (entry.notifying || !this.pending.has(entry.id)) return;
    entry.notifying = true;
    void this.runNotification(entry).finally(() => {
      entry.notifying = false;
    });
  }

  private async runNotification(entry: Pending): Promise<void> {
    const { params } = entry;
    const suggestions = validSuggestions(params.suggestions);
    const actions = suggestions.length > 0 ? ['Allow once', 'Always allow…', 'Deny…'] : ['Allow once', 'Deny…'];
    const message = `toolgate wants to run ${params.toolName}: ${params.summary}. ${params.reason}`;
    // Loop so that backing out of a follow-up picker brings the question back instead of dropping it.
    for (;;) {
      const picked = await this.notifier.show('warning', message, ...actions);
      if (!this.pending.has(entry.id) || picked === undefined) return; // answered elsewhere, or dismissed
      if (picked === 'Allow once') {
        this.answer(entry.id, { kind: 'once' });
        return;
      }
      if (picked === 'Always allow…') {
        const choice = await this.pickRule(suggestions);
        if (choice && this.pending.has(entry.id)) {
          this.answer(entry.id, choice);
          return;
        }
        continue;
      }
      if (picked === 'Deny…') {
        const feedback = await this.notifier.input({
          title: `Deny ${params.toolName}`,
          prompt: 'Optional: tell the agent why, or what to do instead. Press Enter to deny, Escape to go back.',
          placeholder: 'for example: use the test script instead',
        });
        if (feedback !== undefined && this.pending.has(entry.id)) {
          this.answer(entry.id, { kind: 'deny', feedback });
          return;
        }
        continue;
      }
      return;
    }
  }

  private async pickRule(suggestions: RuleSuggestion[]): Promise<ApprovalChoice | undefined> {
    const rule = await this.notifier.pick(
      suggestions.map((suggestion) => ({ label: suggestion.rule, suggestion })),
      { title: 'Always allow', placeholder: 'The rule to add' },
    );
    if (!rule) return undefined;
    const scopes: (QuickPickItem & { scope: RuleScope })[] = RULE_SCOPES.map((scope) => ({
      label: SCOPE_LABELS[scope],
      scope,
      description: scope === rule.suggestion.scope ? 'suggested' : undefined,
    }));
    scopes.sort((a, b) => Number(b.scope === rule.suggestion.scope) - Number(a.scope === rule.suggestion.scope));
    const scope = await this.notifier.pick(scopes, { title: `Always allow ${rule.label}`, placeholder: 'Where to save it' });
    return scope ? { kind: 'always', rule: rule.label, scope: scope.scope } : undefined;
  }
}

/** Suggestions with a rule and a known scope; anything else from the wire is dropped rather than shown. */
function validSuggestions(suggestions: readonly RuleSuggestion[] | undefined): RuleSuggestion[] {
  return (suggestions ?? []).filter(
    (s) => typeof s.rule === 'string' && s.rule.trim() !== '' && (RULE_SCOPES as readonly string[]).includes(s.scope),
  );
}
