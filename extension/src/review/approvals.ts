/**
 * Approval requests from the sidecar (`toolgate/approval/request`): each becomes a card in the chat with Allow
 * once, Always allow (a suggested rule the person may edit, in a scope the person picks), "Allow, and accept edits"
 * (when acceptEdits mode would allow the call: no single rule can say "this command, and the files it writes") and
 * Deny (with optional feedback). When the chat is hidden, a notification offers the same choices; whichever is answered first wins.
 * Nothing here takes focus from the editor: a card is added where the person can reach it, and a notification waits
 * in its corner.
 *
 * An "always allow" rule is saved through `toolgate/settings/addRule` before the call is allowed, so that a rule the
 * sidecar refuses (a typo, a broken settings file) is shown with its reason and can be corrected; the call still
 * waits. Before saving, the sidecar is asked whether the rule would cover the waiting call (an edited rule may not):
 * if not, nothing is saved yet and the card says so; saving the same rule again keeps it anyway. Once saved, the
 * answer is a plain allow. "Accept edits" works the same way: the mode is switched first (naming the call), then
 * the answer is a plain allow.
 */

import type { AcceptEditsSwitch } from './acceptEdits';
import type { ChatPresence, ChatStore } from '../chat/chatStore';
import type { CancellationLike, Disposable, Notifier, QuickPickItem } from '../host';
import type { ApprovalAnswer, ApprovalRequestParams, PendingCall, RuleScope, RuleSuggestion } from '../protocol';
import { RULE_SCOPES } from '../protocol';
import { ASKED_BY_SUBAGENT, subagentName } from '../shared/agentCard';
import { SCOPE_LABELS } from '../shared/scopes';
import type { SidecarClient } from '../sidecar/sidecarClient';
import { failureReason } from '../sidecar/sidecarClient';
import type { ApprovalCard } from '../shared/chatModel';
import type { ApprovalChoice } from '../shared/messages';
import { ACCEPTED_EDITS, ALLOWED_ONCE, WITHDRAWN, alwaysAllowedOutcome, deniedOutcome } from '../shared/outcomes';

/** The answer the sidecar gets for a choice ("always" saved its rule first). Feedback is trimmed; empty is left out. */
export function answerForChoice(choice: ApprovalChoice): ApprovalAnswer {
  switch (choice.kind) {
    case 'once':
    case 'always':
    case 'acceptEdits':
      return { decision: 'allow' };
    case 'deny': {
      const feedback = choice.feedback.trim();
      return feedback ? { decision: 'deny', feedback } : { decision: 'deny' };
    }
  }
}

/** Keeps what an answer grants beyond the call: "always allow" rules (the sidecar validates them), accept edits. */
export interface RuleSaver {
  /**
   * Add an allow rule written for the waiting `call`; rejects with the sidecar's reason when it refuses the rule.
   * `coversCall`: whether the rules in force now allow that very call (null or absent: the sidecar cannot say).
   */
  addRule(sessionId: string, rule: string, scope: RuleScope, call: PendingCall): Promise<{ warnings: string[]; coversCall?: boolean | null }>;
  /** Whether the rules in force plus `rule` (not saved) would allow `call`, and if not, why it would still ask. */
  wouldCover(sessionId: string, rule: string, call: PendingCall): Promise<{ covers: boolean; reason: string }>;
  /** Switch the session to acceptEdits mode to answer the waiting call `toolUseId`. */
  acceptEdits: AcceptEditsSwitch;
}

/** The rule saver over the sidecar's own methods (settings/addRule, permissions/check with `withAllow`). */
export function sidecarRuleSaver(
  client: Pick<SidecarClient, 'addRule' | 'checkPermission'>,
  acceptEdits: AcceptEditsSwitch,
): RuleSaver {
  return {
    addRule: async (sessionId, rule, scope, call) => client.addRule(sessionId, rule, 'allow', scope, call),
    wouldCover: async (sessionId, rule, call) => {
      const verdict = await client.checkPermission(sessionId, call, rule);
      return { covers: verdict.decision === 'allow', reason: verdict.reason };
    },
    acceptEdits,
  };
}

/** What the card says when an edited rule would not cover the call it was written for (nothing saved yet). */
export function notCoveringNotice(rule: string, reason: string): string {
  return `${rule} would not cover this call (${reason}), so it would be asked about again. Edit the rule, or save it again to keep it anyway.`;
}

/** What the card says once answered. For "always", what saving the rule found out. */
export function outcomeForChoice(
  choice: ApprovalChoice,
  saved: { warnings: string[]; coversCall: boolean | undefined } = { warnings: [], coversCall: undefined },
): string {
  switch (choice.kind) {
    case 'once':
      return ALLOWED_ONCE;
    case 'acceptEdits':
      return ACCEPTED_EDITS;
    case 'always':
      return alwaysAllowedOutcome(choice.rule, choice.scope, saved.coversCall, saved.warnings);
    case 'deny':
      return deniedOutcome(choice.feedback);
  }
}

interface Pending {
  id: string;
  params: ApprovalRequestParams;
  resolve: (answer: ApprovalAnswer) => void;
  notifying: boolean;
  /** An "always allow" rule is being saved: other answers wait for its outcome. */
  saving: boolean;
  /** A rule the person was told would not cover the call: saving it again keeps it anyway. */
  warnedRule?: string;
  subscriptions: Disposable[];
}

/** How an answer went: settled, or (for "always allow") refused by the sidecar with a reason. */
export type AnswerOutcome = { ok: true } | { ok: false; error: string };

export class ApprovalBroker implements Disposable {
  private readonly pending = new Map<string, Pending>();
  private counter = 0;
  private readonly visibility: Disposable;

  constructor(
    private readonly store: ChatStore,
    private readonly presence: ChatPresence,
    private readonly notifier: Notifier,
    private readonly rules: RuleSaver,
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
      const entry: Pending = { id, params, resolve, notifying: false, saving: false, subscriptions: [] };
      this.pending.set(id, entry);
      this.store.dispatch({ type: 'approvalRequested', id, card: cardOf(params), at: Date.now() });
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

  /**
   * An answer from the chat card (or the notification). A second answer to the same request is ignored. "Always
   * allow" first saves the rule; when the sidecar refuses it, the request stays open and the card shows why.
   */
  async answer(id: string, choice: ApprovalChoice): Promise<AnswerOutcome> {
    const entry = this.pending.get(id);
    if (!entry || entry.saving) return { ok: false, error: 'This request was answered already.' };
    if (choice.kind === 'acceptEdits') return this.acceptEdits(entry);
    if (choice.kind !== 'always') {
      this.settle(entry, answerForChoice(choice), choice.kind === 'deny' ? 'denied' : 'allowed', outcomeForChoice(choice));
      return { ok: true };
    }
    const { sessionId, toolName, input } = entry.params;
    entry.saving = true;
    if (entry.warnedRule !== choice.rule) {
      const verdict = await this.rules.wouldCover(sessionId, choice.rule, { tool: toolName, input }).catch(() => undefined);
      // (A failed check says nothing: saving the rule then gives the sidecar's own reason, if it refuses it.)
      if (verdict && !verdict.covers) {
        entry.saving = false;
        entry.warnedRule = choice.rule;
        const error = notCoveringNotice(choice.rule, verdict.reason);
        if (this.pending.has(id)) {
          this.store.dispatch({ type: 'approvalFailed', id, rule: choice.rule, scope: choice.scope, error });
        }
        return { ok: false, error };
      }
    }
    let saved: { warnings: string[]; coversCall: boolean | undefined };
    try {
      const { warnings, coversCall } = await this.rules.addRule(sessionId, choice.rule, choice.scope, { tool: toolName, input });
      saved = { warnings, coversCall: coversCall ?? undefined };
    } catch (error) {
      entry.saving = false;
      const reason = failureReason(error);
      if (this.pending.has(id)) {
        this.store.dispatch({ type: 'approvalFailed', id, rule: choice.rule, scope: choice.scope, error: reason });
      }
      return { ok: false, error: reason };
    }
    entry.saving = false;
    if (!this.pending.has(id)) return { ok: false, error: 'The request was withdrawn while the rule was saved.' };
    this.settle(entry, answerForChoice(choice), 'allowed', outcomeForChoice(choice, saved));
    return { ok: true };
  }

  /** "Allow, and accept edits": the mode first; if the sidecar refuses it, the request stays open and says why. */
  private async acceptEdits(entry: Pending): Promise<AnswerOutcome> {
    const { sessionId, toolUseId } = entry.params;
    entry.saving = true;
    try {
      await this.rules.acceptEdits(sessionId, toolUseId);
    } catch (error) {
      entry.saving = false;
      const reason = `The mode was not changed: ${failureReason(error)}`;
      if (this.pending.has(entry.id)) this.store.dispatch({ type: 'approvalFailed', id: entry.id, error: reason });
      return { ok: false, error: reason };
    }
    entry.saving = false;
    if (!this.pending.has(entry.id)) return { ok: false, error: 'The request was withdrawn while the mode was changed.' };
    this.settle(entry, { decision: 'allow' }, 'allowed', ACCEPTED_EDITS);
    return { ok: true };
  }

  /** The sidecar withdrew the request (the turn was interrupted, or it disconnected). */
  cancel(id: string): void {
    const entry = this.pending.get(id);
    if (entry) {
      entry.saving = false;
      this.settle(entry, { decision: 'deny' }, 'cancelled', WITHDRAWN);
    }
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
    this.store.dispatch({ type: 'approvalResolved', id: entry.id, state, outcome, at: Date.now() });
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
    const actions = [
      'Allow once',
      ...(suggestions.length > 0 ? ['Always allow…'] : []),
      ...(params.offersAcceptEdits ? [ACCEPT_EDITS_ACTION] : []),
      'Deny…',
    ];
    // A child's question is named as its approval card's title names it.
    const askedBy = params.subagent ? `${ASKED_BY_SUBAGENT}${subagentName(params.subagent)}` : '';
    const message = `toolgate wants to run ${params.toolName}: ${params.summary}${askedBy}. ${params.reason}`;
    // Loop so that backing out of a follow-up picker brings the question back instead of dropping it.
    for (;;) {
      const picked = await this.notifier.show('warning', message, ...actions);
      if (!this.pending.has(entry.id) || picked === undefined) return; // answered elsewhere, or dismissed
      if (picked === 'Allow once') {
        await this.answer(entry.id, { kind: 'once' });
        return;
      }
      if (picked === ACCEPT_EDITS_ACTION) {
        if ((await this.answer(entry.id, { kind: 'acceptEdits' })).ok || !this.pending.has(entry.id)) return;
        continue; // the card says why the mode was not changed; the question comes back
      }
      if (picked === 'Always allow…') {
        if (await this.alwaysAllowFromPrompts(entry, suggestions)) return;
        continue;
      }
      if (picked === 'Deny…') {
        const feedback = await this.notifier.input({
          title: `Deny ${params.toolName}`,
          prompt: 'Optional: tell the agent why, or what to do instead. Press Enter to deny, Escape to go back.',
          placeholder: 'for example: use the test script instead',
        });
        if (feedback !== undefined && this.pending.has(entry.id)) {
          await this.answer(entry.id, { kind: 'deny', feedback });
          return;
        }
        continue;
      }
      return;
    }
  }

  /**
   * "Always allow…" from the notification: pick a suggestion, edit it, pick a scope, save. A rule the sidecar
   * refuses comes back in the input box with the reason. True once the request is answered (here or elsewhere).
   */
  private async alwaysAllowFromPrompts(entry: Pending, suggestions: RuleSuggestion[]): Promise<boolean> {
    const picked =
      suggestions.length === 1
        ? { suggestion: suggestions[0] as RuleSuggestion }
        : await this.notifier.pick(
            suggestions.map((suggestion) => ({ label: suggestion.rule, suggestion })),
            { title: 'Always allow', placeholder: 'The rule to start from (you can edit it next)' },
          );
    if (!picked) return false;
    let rule = picked.suggestion.rule;
    let error: string | undefined;
    for (;;) {
      const edited = await this.notifier.input({
        title: `Always allow (${entry.params.toolName})`,
        prompt: 'The rule to add; edit it to allow more or less. Press Enter to go on, Escape to go back.',
        value: rule,
        error,
      });
      if (edited === undefined || edited.trim() === '' || !this.pending.has(entry.id)) return !this.pending.has(entry.id);
      rule = edited.trim();
      const scope = await this.pickScope(rule, picked.suggestion.scope);
      if (!scope || !this.pending.has(entry.id)) return !this.pending.has(entry.id);
      const outcome = await this.answer(entry.id, { kind: 'always', rule, scope });
      if (outcome.ok || !this.pending.has(entry.id)) return true;
      error = outcome.error;
    }
  }

  private async pickScope(rule: string, suggested: RuleScope): Promise<RuleScope | undefined> {
    const scopes: (QuickPickItem & { scope: RuleScope })[] = RULE_SCOPES.map((scope) => ({
      label: SCOPE_LABELS[scope],
      scope,
      description: scope === suggested ? 'suggested' : undefined,
    }));
    scopes.sort((a, b) => Number(b.scope === suggested) - Number(a.scope === suggested));
    const picked = await this.notifier.pick(scopes, { title: `Always allow ${rule}`, placeholder: 'Where to save it' });
    return picked?.scope;
  }
}

const ACCEPT_EDITS_ACTION = 'Allow, Accept Edits';

/** The card a request is drawn as: all the request says but its session and raw input, its suggestions checked. */
export function cardOf(params: ApprovalRequestParams): ApprovalCard {
  const { sessionId: _session, input: _input, ...card } = params;
  return { ...card, suggestions: validSuggestions(card.suggestions), offersAcceptEdits: card.offersAcceptEdits === true };
}

/** Suggestions with a rule and a known scope; anything else from the wire is dropped rather than shown. */
function validSuggestions(suggestions: readonly RuleSuggestion[] | undefined): RuleSuggestion[] {
  return (suggestions ?? []).filter(
    (s) => typeof s.rule === 'string' && s.rule.trim() !== '' && (RULE_SCOPES as readonly string[]).includes(s.scope),
  );
}
