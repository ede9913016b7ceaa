import { describe, expect, it } from 'vitest';

import { ApprovalBroker, answerForChoice } from '../src/approvals';
import type { ApprovalRequestParams } from '../src/protocol';
import { FakeCancellation, FakeNotifier, FakePresence, newStore, settle } from './fakes';

const bash: ApprovalRequestParams = {
  sessionId: 's1',
  toolUseId: 'toolu_1',
  toolName: 'Bash',
  input: { command: 'npm test' },
  summary: 'npm test',
  reason: 'No rule allows Bash(npm test).',
  suggestions: [
    { rule: 'Bash(npm test)', scope: 'local' },
    { rule: 'Bash(npm test:*)', scope: 'project' },
  ],
};

function setup(visible: boolean) {
  const store = newStore();
  const presence = new FakePresence(visible);
  const notifier = new FakeNotifier();
  let changes = 0;
  const broker = new ApprovalBroker(store, presence, notifier, () => changes++);
  return { store, presence, notifier, broker, changes: () => changes };
}

function card(store: ReturnType<typeof newStore>) {
  const item = store.state.items.find((candidate) => candidate.kind === 'approval');
  if (!item || item.kind !== 'approval') throw new Error('no approval card');
  return item;
}

describe('answerForChoice', () => {
  it('maps allow once, always allow and deny to the protocol answer', () => {
    expect(answerForChoice({ kind: 'once' })).toEqual({ decision: 'allow' });
    expect(answerForChoice({ kind: 'always', rule: ' Bash(npm test) ', scope: 'user' })).toEqual({
      decision: 'allow',
      remember: { rule: 'Bash(npm test)', scope: 'user' },
    });
    expect(answerForChoice({ kind: 'deny', feedback: '  use make test  ' })).toEqual({
      decision: 'deny',
      feedback: 'use make test',
    });
    expect(answerForChoice({ kind: 'deny', feedback: '   ' })).toEqual({ decision: 'deny' });
  });
});

describe('ApprovalBroker', () => {
  it('shows a card with the reason and resolves with the answer given on it', async () => {
    const { store, broker, notifier } = setup(true);
    const answer = broker.request(bash);
    expect(card(store)).toMatchObject({ toolName: 'Bash', summary: 'npm test', reason: bash.reason, state: 'pending' });
    expect(broker.pendingCount).toBe(1);
    expect(notifier.shown).toHaveLength(0); // the chat is visible: no notification

    expect(broker.answer(card(store).id, { kind: 'always', rule: 'Bash(npm test:*)', scope: 'session' })).toBe(true);
    await expect(answer).resolves.toEqual({ decision: 'allow', remember: { rule: 'Bash(npm test:*)', scope: 'session' } });
    expect(card(store).state).toBe('allowed');
    expect(card(store).outcome).toContain('Bash(npm test:*)');
    expect(broker.pendingCount).toBe(0);
  });

  it('ignores a second answer to the same request', async () => {
    const { store, broker } = setup(true);
    const answer = broker.request(bash);
    const id = card(store).id;
    broker.answer(id, { kind: 'deny', feedback: 'not now' });
    expect(broker.answer(id, { kind: 'once' })).toBe(false);
    await expect(answer).resolves.toEqual({ decision: 'deny', feedback: 'not now' });
    expect(card(store).state).toBe('denied');
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

  it('lets the notification pick a suggested rule and a scope', async () => {
    const { broker, notifier } = setup(false);
    notifier.pickAnswers = ['Bash(npm test:*)', 'All my projects (user settings)'];
    const answer = broker.request(bash);
    notifier.click('Always allow…');
    await expect(answer).resolves.toEqual({ decision: 'allow', remember: { rule: 'Bash(npm test:*)', scope: 'user' } });
    // The scope picker lists the suggestion's own scope first.
    expect(notifier.picks[1]?.labels[0]).toContain('shared');
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
    broker.answer(card(store).id, { kind: 'once' });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
  });

  it('lets whichever of card and notification is answered first win', async () => {
    const { store, broker, notifier } = setup(false);
    const answer = broker.request(bash);
    broker.answer(card(store).id, { kind: 'deny', feedback: '' });
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
    expect(broker.answer(card(store).id, { kind: 'once' })).toBe(false);
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
    expect(card(store).suggestions).toEqual([]);
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
