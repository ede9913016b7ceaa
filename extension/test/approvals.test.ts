import { describe, expect, it } from 'vitest';

import { acceptEditsSwitch } from '../src/review/acceptEdits';
import { ApprovalBroker, answerForChoice, notCoveringNotice } from '../src/review/approvals';
import type { ApprovalRequestParams } from '../src/protocol';
import { ACCEPTED_EDITS } from '../src/shared/outcomes';
import { FakeCancellation, FakeNotifier, FakePresence, FakeRules, approvalRequest, deferred, newStore, settle } from './fakes';

const bash = approvalRequest({
  toolUseId: 'toolu_1',
  input: { command: 'npm test' },
  summary: 'npm test',
  reason: 'No rule allows Bash(npm test).',
  suggestions: [
    { rule: 'Bash(npm test)', scope: 'local' },
    { rule: 'Bash(npm test:*)', scope: 'project' },
  ],
});

function setup(visible: boolean) {
  const store = newStore();
  const presence = new FakePresence(visible);
  const notifier = new FakeNotifier();
  const rules = new FakeRules();
  let changes = 0;
  const broker = new ApprovalBroker(store, presence, notifier, rules, () => changes++);
  return { store, presence, notifier, rules, broker, changes: () => changes };
}

function card(store: ReturnType<typeof newStore>) {
  const item = store.state.items.find((candidate) => candidate.kind === 'approval');
  if (!item || item.kind !== 'approval') throw new Error('no approval card');
  return item;
}

describe('answerForChoice', () => {
  it('maps allow once, always allow and deny to the protocol answer', () => {
    expect(answerForChoice({ kind: 'once' })).toEqual({ decision: 'allow' });
    // "Always" saved its rule through settings/addRule already: the answer itself is a plain allow.
    expect(answerForChoice({ kind: 'always', rule: ' Bash(npm test) ', scope: 'user' })).toEqual({ decision: 'allow' });
    expect(answerForChoice({ kind: 'deny', feedback: '  use make test  ' })).toEqual({
      decision: 'deny',
      feedback: 'use make test',
    });
    expect(answerForChoice({ kind: 'deny', feedback: '   ' })).toEqual({ decision: 'deny' });
  });
});

describe('ApprovalBroker', () => {
  it('draws the card from all the request says but its session and raw input: a new field needs no restating', () => {
    const { store, broker } = setup(true);
    // A field this extension does not know yet, as a newer sidecar would send it: it reaches the card as it is.
    void broker.request({ ...bash, risk: 'deletes files' } as ApprovalRequestParams);
    const { sessionId: _session, input: _input, ...rest } = bash;
    expect(card(store).card).toEqual({ ...rest, risk: 'deletes files' });
  });

  it('shows a card with the reason; "always allow" saves the rule through the sidecar, then allows', async () => {
    const { store, broker, notifier, rules } = setup(true);
    const answer = broker.request(bash);
    expect(card(store)).toMatchObject({ card: { toolName: 'Bash', summary: 'npm test', reason: bash.reason }, state: 'pending' });
    expect(broker.pendingCount).toBe(1);
    expect(notifier.shown).toHaveLength(0); // the chat is visible: no notification

    const outcome = await broker.answer(card(store).id, { kind: 'always', rule: 'Bash(npm test:*)', scope: 'session' });
    expect(outcome).toEqual({ ok: true });
    const call = { tool: 'Bash', input: { command: 'npm test' } }; // the waiting call, so the answer can say if it is covered
    expect(rules.added).toEqual([{ sessionId: 's1', rule: 'Bash(npm test:*)', scope: 'session', call }]);
    // The rule is kept already; the answer needs no `remember` (which would add it a second time).
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(card(store).state).toBe('allowed');
    expect(card(store).outcome).toBe('Allowed. From now on Bash(npm test:*) is allowed (this session only).');
    expect(broker.pendingCount).toBe(0);
  });

  it('keeps the card open with the reason when the sidecar refuses an edited rule, then saves the fix', async () => {
    const { store, broker, rules } = setup(true);
    const answer = broker.request(bash);
    const id = card(store).id;
    rules.refusals = ["The rule 'Bash(npm test:*' was not changed: unbalanced parentheses"];
    const refused = await broker.answer(id, { kind: 'always', rule: 'Bash(npm test:*', scope: 'project' });
    expect(refused).toEqual({ ok: false, error: "The rule 'Bash(npm test:*' was not changed: unbalanced parentheses" });
    expect(card(store)).toMatchObject({
      state: 'pending',
      draft: { rule: 'Bash(npm test:*', scope: 'project' },
      error: "The rule 'Bash(npm test:*' was not changed: unbalanced parentheses",
    });
    expect(broker.pendingCount).toBe(1); // the call still waits

    expect(await broker.answer(id, { kind: 'always', rule: 'Bash(npm test:*)', scope: 'project' })).toEqual({ ok: true });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(card(store)).toMatchObject({ state: 'allowed', error: '' });
    expect(rules.added.map((added) => added.rule)).toEqual(['Bash(npm test:*)']);
  });

  it('says when a saved rule does not cover the call it was written for, and passes on the warnings', async () => {
    const { store, broker, rules } = setup(true);
    rules.covers = false;
    rules.warnings = ['Bash(npm:*) lets the model run any code through npm scripts.'];
    const answer = broker.request(bash);
    await broker.answer(card(store).id, { kind: 'always', rule: 'Bash(npm:*)', scope: 'local' });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(card(store).outcome).toContain('does not cover this call itself');
    expect(card(store).outcome).toContain('lets the model run any code');
  });

  it('says before saving that an edited rule would not cover the call; the same rule saved again is kept anyway', async () => {
    const { store, broker, rules } = setup(true);
    const answer = broker.request(bash);
    const id = card(store).id;
    rules.wouldNotCover = 'no rule allows Bash(npm test) yet';
    const warned = await broker.answer(id, { kind: 'always', rule: 'Bash(npm run lint)', scope: 'local' });
    const notice = notCoveringNotice('Bash(npm run lint)', 'no rule allows Bash(npm test) yet');
    expect(warned).toEqual({ ok: false, error: notice });
    expect(card(store)).toMatchObject({ state: 'pending', error: notice, draft: { rule: 'Bash(npm run lint)', scope: 'local' } });
    expect(rules.added).toEqual([]); // nothing saved yet, and the call still waits
    expect(broker.pendingCount).toBe(1);

    // Another edit is checked again; the warned rule, saved a second time, is kept without asking again.
    expect(await broker.answer(id, { kind: 'always', rule: 'Bash(npm run build)', scope: 'local' })).toMatchObject({ ok: false });
    expect(await broker.answer(id, { kind: 'always', rule: 'Bash(npm run build)', scope: 'local' })).toEqual({ ok: true });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(rules.checked).toEqual(['Bash(npm run lint)', 'Bash(npm run build)']);
    expect(rules.added.map((added) => added.rule)).toEqual(['Bash(npm run build)']);
  });

  it('ignores a second answer to the same request', async () => {
    const { store, broker } = setup(true);
    const answer = broker.request(bash);
    const id = card(store).id;
    await broker.answer(id, { kind: 'deny', feedback: 'not now' });
    expect((await broker.answer(id, { kind: 'once' })).ok).toBe(false);
    await expect(answer).resolves.toEqual({ decision: 'deny', feedback: 'not now' });
    expect(card(store).state).toBe('denied');
  });

  it('ignores other answers while a rule is being saved, and a request withdrawn meanwhile stays withdrawn', async () => {
    const { store, broker, rules } = setup(true);
    const token = new FakeCancellation();
    const answer = broker.request(bash, token);
    const id = card(store).id;
    rules.gate = deferred<void>();
    const saving = broker.answer(id, { kind: 'always', rule: 'Bash(npm test)', scope: 'local' });
    expect((await broker.answer(id, { kind: 'deny', feedback: '' })).ok).toBe(false);
    token.cancel();
    rules.gate.resolve();
    expect((await saving).ok).toBe(false);
    await expect(answer).resolves.toEqual({ decision: 'deny' });
    expect(card(store).state).toBe('cancelled');
  });

  it('"allow, and accept edits" switches the mode for the waiting call first, then allows', async () => {
    const mkdir = { ...bash, input: { command: 'mkdir build' }, summary: 'mkdir build', suggestions: [], offersAcceptEdits: true };
    const { store, broker, rules } = setup(true);
    const answer = broker.request(mkdir);
    expect(card(store).card.offersAcceptEdits).toBe(true);
    expect(await broker.answer(card(store).id, { kind: 'acceptEdits' })).toEqual({ ok: true });
    expect(rules.acceptedEdits).toEqual([{ sessionId: 's1', toolUseId: 'toolu_1' }]);
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(card(store)).toMatchObject({ state: 'allowed', outcome: ACCEPTED_EDITS });
  });

  it('keeps the card open with the reason when the mode cannot be switched, and takes another answer', async () => {
    const mkdir = { ...bash, suggestions: [], offersAcceptEdits: true };
    const { store, broker, rules } = setup(true);
    const answer = broker.request(mkdir);
    rules.modeRefusal = 'There is no session s1.';
    const outcome = await broker.answer(card(store).id, { kind: 'acceptEdits' });
    expect(outcome).toEqual({ ok: false, error: 'The mode was not changed: There is no session s1.' });
    expect(card(store)).toMatchObject({ state: 'pending', draft: null, error: 'The mode was not changed: There is no session s1.' });
    await broker.answer(card(store).id, { kind: 'once' });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(rules.acceptedEdits).toEqual([]);
  });

  it('offers "accept edits" in the notification only when the sidecar does', async () => {
    const { broker, notifier, rules } = setup(false);
    const answer = broker.request({ ...bash, offersAcceptEdits: true });
    expect(notifier.shown[0]?.actions).toEqual(['Allow once', 'Always allow…', 'Allow, Accept Edits', 'Deny…']);
    notifier.click('Allow, Accept Edits');
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(rules.acceptedEdits).toHaveLength(1);
  });

  it('switches the mode through settings/setMode, naming the call, and tells the header', async () => {
    const calls: unknown[][] = [];
    const client = {
      setMode: async (...args: unknown[]) => {
        calls.push(args);
        return {} as never;
      },
    };
    const modes: string[] = [];
    await acceptEditsSwitch(client as never, (mode) => modes.push(mode))('s1', 'toolu_1');
    expect(calls).toEqual([['s1', 'acceptEdits', 'toolu_1']]);
    expect(modes).toEqual(['acceptEdits']);
  });

  it('falls back to a notification with the same choices when the chat is hidden', async () => {
    const { broker, notifier } = setup(false);
    const answer = broker.request(bash);
    expect(notifier.shown).toHaveLength(1);
    expect(notifier.shown[0]?.message).toContain('npm test');
    expect(notifier.shown[0]?.message).toContain(bash.reason);
    expect(notifier.shown[0]?.actions).toEqual(['Allow once', 'Always allow…', 'Deny…']);
    notifier.click('Allow once');
    await expect(answer).resolves.toEqual({ decision: 'allow' });
  });

  it("names the subagent that asks in the notification, and the card carries it", async () => {
    const { store, broker, notifier } = setup(false);
    const subagent = { taskId: 'agent-1', agentType: 'explore', description: 'find the tests' };
    const answer = broker.request({ ...bash, subagent });
    expect(notifier.shown[0]?.message).toBe(
      `toolgate wants to run Bash: npm test — asked by the subagent explore: find the tests. ${bash.reason}`,
    );
    expect(card(store).card.subagent).toEqual(subagent);
    notifier.click('Allow once');
    await expect(answer).resolves.toEqual({ decision: 'allow' });
  });

  it('lets the notification pick a suggested rule, edit it and pick a scope', async () => {
    const { broker, notifier, rules } = setup(false);
    notifier.pickAnswers = ['Bash(npm test:*)', 'All my projects (user settings)'];
    notifier.inputAnswers = ['Bash(npm test -- --watch)'];
    const answer = broker.request(bash);
    notifier.click('Always allow…');
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(notifier.inputOptions[0]).toMatchObject({ value: 'Bash(npm test:*)', error: undefined });
    const call = { tool: 'Bash', input: { command: 'npm test' } };
    expect(rules.added).toEqual([{ sessionId: 's1', rule: 'Bash(npm test -- --watch)', scope: 'user', call }]);
    // The scope picker lists the suggestion's own scope first.
    expect(notifier.picks[1]?.labels[0]).toContain('shared');
  });

  it('brings a rule the sidecar refused back into the notification\'s input box, with the reason', async () => {
    const { broker, notifier, rules } = setup(false);
    rules.refusals = ['Bash(npm test is not a valid rule: missing )'];
    notifier.pickAnswers = ['Bash(npm test)', 'This session only', 'This session only'];
    notifier.inputAnswers = ['Bash(npm test', 'Bash(npm test)'];
    const answer = broker.request(bash);
    notifier.click('Always allow…');
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    expect(notifier.inputOptions[1]).toMatchObject({
      value: 'Bash(npm test',
      error: 'Bash(npm test is not a valid rule: missing )',
    });
    expect(rules.added.map((added) => added.rule)).toEqual(['Bash(npm test)']);
  });

  it('asks the notification again when the person backs out of a follow-up picker', async () => {
    const { broker, notifier } = setup(false);
    notifier.inputAnswers = [undefined, 'run the linter first'];
    const answer = broker.request(bash);
    notifier.click('Deny…');
    await settle();
    expect(notifier.shown).toHaveLength(2); // Escape in the feedback box brought the question back
    notifier.click('Deny…');
    await expect(answer).resolves.toEqual({ decision: 'deny', feedback: 'run the linter first' });
  });

  it('keeps the request pending when the notification is dismissed', async () => {
    const { store, broker, notifier } = setup(false);
    const answer = broker.request(bash);
    notifier.click(undefined);
    await settle();
    expect(card(store).state).toBe('pending');
    await broker.answer(card(store).id, { kind: 'once' });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
  });

  it('lets whichever of card and notification is answered first win', async () => {
    const { store, broker, notifier } = setup(false);
    const answer = broker.request(bash);
    await broker.answer(card(store).id, { kind: 'deny', feedback: '' });
    notifier.click('Allow once'); // too late
    await expect(answer).resolves.toEqual({ decision: 'deny' });
    await settle();
    expect(card(store).state).toBe('denied');
  });

  it('notifies about a waiting card once the chat is hidden', async () => {
    const { broker, presence, notifier } = setup(true);
    void broker.request(bash);
    expect(notifier.shown).toHaveLength(0);
    presence.setVisible(false);
    expect(notifier.shown).toHaveLength(1);
  });

  it('withdraws the card when the sidecar cancels the request', async () => {
    const { store, broker } = setup(true);
    const token = new FakeCancellation();
    const answer = broker.request(bash, token);
    token.cancel();
    await expect(answer).resolves.toEqual({ decision: 'deny' });
    expect(card(store).state).toBe('cancelled');
    expect((await broker.answer(card(store).id, { kind: 'once' })).ok).toBe(false);
  });

  it('drops malformed suggestions and offers no "Always allow" without any', async () => {
    const { store, broker, notifier } = setup(false);
    void broker.request({
      ...bash,
      suggestions: [
        { rule: '  ', scope: 'local' },
        { rule: 'Bash(ls)', scope: 'galaxy' as never },
      ],
    });
    expect(card(store).card.suggestions).toEqual([]);
    expect(notifier.shown[0]?.actions).toEqual(['Allow once', 'Deny…']);
  });

  it('reports the pending count so the view can show a badge', async () => {
    const { broker, changes } = setup(true);
    void broker.request(bash);
    void broker.request({ ...bash, toolUseId: 'toolu_2' });
    expect(broker.pendingCount).toBe(2);
    broker.cancelAll();
    expect(broker.pendingCount).toBe(0);
    expect(changes()).toBe(4);
  });
});
