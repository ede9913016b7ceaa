import { describe, expect, it } from 'vitest';

import { ApprovalBroker, sidecarRuleSaver } from '../src/review/approvals';
import { sidecarStatus } from '../src/chat/chatNotices';
import { ChatController } from '../src/chat/controller';
import type { CancellationLike } from '../src/host';
import { ORIGINAL_SCHEME, PROPOSED_SCHEME, ProposalStore } from '../src/review/proposals';
import { ReviewController } from '../src/review/reviews';
import type { RpcConnection } from '../src/sidecar/rpc';
import type { PythonOk } from '../src/python/python';
import { SidecarClient } from '../src/sidecar/sidecarClient';
import { FakeEditor, FakeNotifier, approvalRequest, FakePresence, FakeRules, FakeTimers, newStore, settle } from './fakes';

type Handler = (params: unknown) => unknown;

/** A sidecar that answers the methods the test gives it, and "method not found" for the rest. */
class FakeSidecar implements RpcConnection {
  readonly calls: { method: string; params: unknown }[] = [];
  readonly requestHandlers = new Map<string, (params: unknown, token: CancellationLike) => Promise<unknown>>();
  readonly notificationHandlers = new Map<string, (params: unknown) => void>();

  constructor(private readonly methods: Record<string, Handler>) {}

  async sendRequest<R>(method: string, params: unknown): Promise<R> {
    this.calls.push({ method, params });
    const handler = this.methods[method];
    if (!handler) throw Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 });
    return (await handler(params)) as R;
  }

  async sendNotification(method: string, params: unknown): Promise<void> {
    this.calls.push({ method, params });
  }

  notify(method: string, params: unknown): void {
    this.notificationHandlers.get(method)?.(params);
  }
}

function setup(methods: Record<string, Handler>, connected = true) {
  const store = newStore();
  const sidecar = new FakeSidecar(methods);
  const client = new SidecarClient(() => (connected ? sidecar : undefined), {
    onRequest: (method, handler) => sidecar.requestHandlers.set(method, handler),
    onNotification: (method, handler) => sidecar.notificationHandlers.set(method, handler),
  });
  const notifier = new FakeNotifier();
  const presence = new FakePresence(true);
  const approvals = new ApprovalBroker(store, presence, notifier, new FakeRules());
  const reviews = new ReviewController(
    new ProposalStore(PROPOSED_SCHEME, false),
    new ProposalStore(ORIGINAL_SCHEME, true),
    new FakeEditor(),
    store,
    presence,
    notifier,
  );
  client.onApprovalRequest((params, token) => approvals.request(params, token));
  const restarts: number[] = [];
  const logged: string[] = [];
  const saved: { fileName: string; content: string; kind: string }[] = [];
  const controller = new ChatController({
    store,
    client,
    approvals,
    reviews,
    notifier,
    timers: new FakeTimers(),
    defaultMode: () => 'acceptEdits',
    reviewEdits: () => 'always',
    saveDocument: (fileName, content, kind) => {
      saved.push({ fileName, content, kind });
      return Promise.resolve(`/chosen/${fileName}`);
    },
    providerConfiguration: () => ({ provider: 'openai', model: null, baseUrl: 'http://127.0.0.1:9/v1', apiKey: null }),
    hasStoredKey: () => false,
    restartSidecar: async () => {
      restarts.push(1);
    },
    log: (line) => logged.push(line),
  });
  return { store, sidecar, controller, approvals, notifier, restarts, logged, saved };
}

const python: PythonOk = {
  ok: true,
  candidate: { command: 'python3', source: 'default' },
  executable: '/usr/bin/python3',
  version: '3.11.7',
  toolgateVersion: '0.1.0',
};

describe('ChatController', () => {
  it('starts a session in the default mode, sends the prompt and shows the streamed reply', async () => {
    const { store, sidecar, controller } = setup({
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'acceptEdits', title: '' }),
      'toolgate/chat/send': (params) => {
        sidecar.notify('toolgate/chat/event', { sessionId: 's1', event: { type: 'text_delta', text: 'Hello' } });
        sidecar.notify('toolgate/chat/event', { sessionId: 'other', event: { type: 'text_delta', text: 'not ours' } });
        expect(params).toEqual({ sessionId: 's1', text: 'hi' });
        expect(store.state.busy).toBe(true);
        return { stopReason: 'end_turn' };
      },
    });
    await controller.handle({ type: 'send', text: 'hi' });
    expect(sidecar.calls[0]).toEqual({
      method: 'toolgate/session/new',
      params: { mode: 'acceptEdits', reviewEdits: 'always' },
    });
    expect(store.state.sessionId).toBe('s1');
    expect(store.state.items.map((item) => [item.kind, 'text' in item ? item.text : ''])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello'],
    ]);
    expect(store.state.busy).toBe(false);
  });

  it('says when a turn was interrupted', async () => {
    const { store, controller } = setup({
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'default', title: '' }),
      'toolgate/chat/send': () => ({ stopReason: 'interrupted' }),
    });
    await controller.handle({ type: 'send', text: 'go' });
    expect(store.state.items.at(-1)).toMatchObject({ kind: 'notice', text: expect.stringContaining('Interrupted') });
  });

  it('explains a sidecar that cannot chat yet instead of failing silently', async () => {
    const { store, controller } = setup({});
    await controller.handle({ type: 'send', text: 'hi' });
    const notice = store.state.items.find((item) => item.kind === 'notice');
    expect(notice).toMatchObject({ level: 'warning' });
    expect(notice && 'text' in notice && notice.text).toContain('does not offer toolgate/session/new yet');
    expect(store.state.busy).toBe(false);
  });

  it('says so when no sidecar runs', async () => {
    const { store, controller } = setup({}, false);
    await controller.handle({ type: 'send', text: 'hi' });
    const notice = store.state.items.find((item) => item.kind === 'notice');
    expect(notice && 'text' in notice && notice.text).toContain('not running');
  });

  it('interrupts the running turn of the current session', async () => {
    const { store, sidecar, controller } = setup({ 'toolgate/chat/interrupt': () => null });
    store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    await controller.handle({ type: 'interrupt' });
    expect(sidecar.calls).toHaveLength(0); // nothing is running
    store.dispatch({ type: 'busy', busy: true });
    await controller.handle({ type: 'interrupt' });
    expect(sidecar.calls).toEqual([{ method: 'toolgate/chat/interrupt', params: { sessionId: 's1' } }]);
  });

  it('sends /compact [focus] to the sidecar as a compaction, not as a message', async () => {
    const { store, sidecar, controller } = setup({ 'toolgate/chat/compact': () => ({ compacted: true }) });
    await controller.handle({ type: 'send', text: '/compact' });
    expect(sidecar.calls).toHaveLength(0); // no session yet: nothing to compact
    expect(store.state.items.at(-1)).toMatchObject({ kind: 'notice', text: 'There is no conversation to compact yet.' });
    store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    await controller.handle({ type: 'send', text: '/compact  the parser work ' });
    await controller.handle({ type: 'send', text: '/compact' });
    expect(sidecar.calls).toEqual([
      { method: 'toolgate/chat/compact', params: { sessionId: 's1', focus: 'the parser work' } },
      { method: 'toolgate/chat/compact', params: { sessionId: 's1', focus: null } },
    ]);
    expect(store.state.items.some((item) => item.kind === 'user')).toBe(false);
    expect(store.state.busy).toBe(false);
  });

  it('renames, searches and exports sessions for the history list, and saves an export where the person chooses', async () => {
    const { store, sidecar, controller, saved } = setup({
      'toolgate/session/rename': (params) => ({ title: (params as { title: string }).title }),
      'toolgate/session/list': () => ({ sessions: [] }),
      'toolgate/session/search': () => ({ matches: [{ sessionId: 's1', inTitle: false, snippet: 'the cache' }] }),
      'toolgate/session/export': () => ({ content: '# Parser\n', fileName: 'parser.md' }),
    });
    await controller.handle({ type: 'renameSession', sessionId: 's1', title: 'Parser' });
    await controller.handle({ type: 'searchSessions', query: ' cache ' });
    expect(store.state.sessionSearch).toEqual({ query: 'cache', matches: [{ sessionId: 's1', inTitle: false, snippet: 'the cache' }] });
    await controller.handle({ type: 'searchSessions', query: '' }); // ends the search without asking
    expect(store.state.sessionSearch).toBeNull();
    await controller.handle({ type: 'exportSession', sessionId: 's1', format: 'markdown' });
    expect(sidecar.calls.map((call) => [call.method, call.params])).toEqual([
      ['toolgate/session/rename', { sessionId: 's1', title: 'Parser' }],
      ['toolgate/session/list', {}], // the list shows the new title
      ['toolgate/session/search', { query: 'cache' }],
      ['toolgate/session/export', { sessionId: 's1', format: 'markdown' }],
    ]);
    expect(saved).toEqual([{ fileName: 'parser.md', content: '# Parser\n', kind: 'markdown' }]);
    expect(store.state.items.at(-1)).toMatchObject({ kind: 'notice', text: 'The session was exported to /chosen/parser.md.' });
  });

  it('draws the session again from its history once a turn compacted it, keeping the context line', async () => {
    const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const summary = { ...usage };
    const { store, sidecar, controller } = setup({
      'toolgate/chat/send': () => {
        const compacted = {
          type: 'compacted', trigger: 'auto', summarised: 2, kept: 1, tokens_before: 9, tokens_after: 3, seconds: 1,
          summary: 'S', reattached: [], forgotten: [], summary_usage: summary,
        };
        sidecar.notify('toolgate/chat/event', { sessionId: 's1', event: compacted });
        const report = { type: 'usage', usage, context_tokens: 5, context_estimated: false, context_window: 10, cost_usd: null, total_usage: usage, total_cost_usd: null };
        sidecar.notify('toolgate/chat/event', { sessionId: 's1', event: report });
        return { stopReason: 'end_turn' };
      },
      'toolgate/session/list': () => ({ sessions: [] }),
      'toolgate/settings/get': () => ({ sessionId: 's1', mode: 'default', reviewEdits: 'when_asking', rules: [], problems: [] }),
      'toolgate/chat/history': () => ({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'old' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        ],
        todos: [],
        busy: false,
        decisions: [],
        calls: {},
        compactions: [{ after_messages: 3, summarised_messages: 2, trigger: 'auto', summary: 'S', at: '2026-12-04T20:00:00Z' }],
      }),
    });
    store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    await controller.handle({ type: 'send', text: 'hi' });
    expect(store.state.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'user', 'notice']);
    expect(store.state.summarised).toBe(2);
    expect(store.state.usage).toMatchObject({ context_tokens: 5 });
  });

  it('routes an approval from the sidecar to a card and the card\'s answer back', async () => {
    const { store, sidecar, controller } = setup({});
    const handler = sidecar.requestHandlers.get('toolgate/approval/request');
    const answer = handler?.(
      approvalRequest(),
      { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) },
    );
    const card = store.state.items[0];
    await controller.handle({ type: 'approval', id: card?.id ?? '', choice: { kind: 'deny', feedback: 'no' } });
    await expect(answer).resolves.toEqual({ decision: 'deny', feedback: 'no' });
  });

  it('rolls the mode back when the sidecar refuses it, and warns when bypass is on', async () => {
    const refusing = setup({ 'toolgate/session/new': () => ({ sessionId: 's1' }) });
    await refusing.controller.handle({ type: 'setMode', mode: 'plan' });
    expect(refusing.store.state.mode).toBe('acceptEdits');

    const accepting = setup({ 'toolgate/session/new': () => ({ sessionId: 's1' }), 'toolgate/settings/setMode': () => null });
    await accepting.controller.handle({ type: 'setMode', mode: 'bypassPermissions' });
    expect(accepting.store.state.mode).toBe('bypassPermissions');
    expect(accepting.store.state.items.at(-1)).toMatchObject({ kind: 'notice', level: 'warning' });
  });

  it('shows an outage in the transcript, closes open prompts, and notes the recovery', async () => {
    const { store, controller, approvals } = setup({});
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate', version: '0.1.0' }, recovered: false });
    const pending = approvals.request(approvalRequest({ summary: 'x' }));
    store.dispatch({ type: 'busy', busy: true });
    controller.sidecarChanged({ kind: 'restarting', attempt: 1, maxAttempts: 5, delayMs: 500, reason: 'exit' });
    await expect(pending).resolves.toEqual({ decision: 'deny' });
    expect(store.state.busy).toBe(false);
    expect(store.state.sidecar).toMatchObject({ state: 'restarting', attempt: 1 });
    expect(store.state.items.at(-1)).toMatchObject({ kind: 'notice', level: 'error' });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: true });
    await settle();
    expect(store.state.items.at(-1)).toMatchObject({ kind: 'notice', text: 'The sidecar is running again.' });
  });

  it('says ready only once the new sidecar knows the model, and sends what was typed while it started', async () => {
    let configured!: () => void;
    const { store, sidecar, controller } = setup({
      'toolgate/provider/configure': () =>
        new Promise((resolve) => {
          configured = () => resolve({ provider: 'openai', model: 'm', baseUrl: null, hasKey: true, message: 'Ready.' });
        }),
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'acceptEdits', title: '' }),
      'toolgate/chat/send': () => ({ stopReason: 'end_turn' }),
    });
    controller.sidecarChanged({ kind: 'starting', attempt: 0 });
    await controller.handle({ type: 'send', text: 'first' });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await controller.handle({ type: 'send', text: 'second' });
    await settle();
    expect(store.state.sidecar.state).toBe('starting'); // the process runs, but does not know the model yet
    expect(store.state.items).toMatchObject([
      { kind: 'user', text: 'first', queued: true },
      { kind: 'user', text: 'second', queued: true },
    ]);
    expect(sidecar.calls.map((call) => call.method)).toEqual(['toolgate/provider/configure']);

    configured();
    await settle();
    await settle();
    expect(store.state.sidecar.state).toBe('ready');
    const sent = sidecar.calls.filter((call) => call.method === 'toolgate/chat/send');
    expect(sent).toEqual([{ method: 'toolgate/chat/send', params: { sessionId: 's1', text: 'first\n\nsecond' } }]);
    expect(store.state.items).toMatchObject([{ kind: 'user', text: 'first\n\nsecond', queued: false }]);
    expect(store.state.items.filter((item) => item.kind === 'notice')).toEqual([]);
  });

  it('ends the running turn\'s cards when the sidecar dies under it, in words instead of the RPC error', async () => {
    let fail!: (error: Error) => void;
    const { store, sidecar, controller } = setup({
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'default', title: '' }),
      'toolgate/chat/send': () =>
        new Promise((_, reject) => {
          fail = reject;
        }),
    });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await settle();
    const turn = controller.handle({ type: 'send', text: 'run it' });
    await settle();
    sidecar.notify('toolgate/chat/event', {
      sessionId: 's1',
      event: { type: 'tool_call_started', tool_use_id: 't1', name: 'Bash', input: {}, summary: 'sleep 600' },
    });
    // The connection's pending request is rejected first; the manager notices the exit a moment later.
    fail(new Error('Pending response rejected since connection got disposed'));
    await turn;
    controller.sidecarChanged({ kind: 'restarting', attempt: 1, maxAttempts: 3, delayMs: 500, reason: 'killed by SIGKILL' });
    expect(store.state.busy).toBe(false);
    expect(store.state.items.find((item) => item.kind === 'tool')).toMatchObject({
      status: 'error',
      resultSummary: 'Interrupted: the sidecar stopped',
    });
    const notices = store.state.items.filter((item) => item.kind === 'notice').map((item) => item.text);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('stopped unexpectedly (killed by SIGKILL). The turn that was running has ended');
    expect(notices[0]).toContain('send your message again');
    expect(notices[0]).not.toContain('Pending response');
  });

  it('takes the next message after a crash even when the old connection never answers the turn it lost', async () => {
    let answerLate!: (result: unknown) => void;
    let sends = 0;
    const { store, sidecar, controller } = setup({
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'default', title: '' }),
      'toolgate/session/load': () => ({ sessionId: 's1', mode: 'default', title: '' }),
      'toolgate/chat/send': () => {
        sends += 1;
        // The first turn's answer would only come (if ever) after the restart; the second one is answered.
        return sends === 1 ? new Promise((resolve) => (answerLate = resolve)) : { stopReason: 'end_turn' };
      },
    });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await settle();
    const lost = controller.handle({ type: 'send', text: 'wait for a long time' });
    await settle();
    controller.sidecarChanged({ kind: 'restarting', attempt: 1, maxAttempts: 5, delayMs: 500, reason: 'killed by SIGKILL' });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: true });
    await settle();
    await controller.handle({ type: 'send', text: 'make a todo list' });
    const texts = store.state.items.filter((item) => item.kind === 'notice').map((item) => item.text);
    expect(texts.some((text) => text.includes('A turn is still running'))).toBe(false);
    expect(sidecar.calls.filter((call) => call.method === 'toolgate/chat/send')).toHaveLength(2);
    expect(store.state.busy).toBe(false);
    // The lost turn's answer arriving now changes nothing.
    answerLate({ stopReason: 'end_turn' });
    await lost;
    expect(store.state.busy).toBe(false);
  });

  it('opens a session after a crash even when the old connection never answers the one New asked for', async () => {
    let opened = 0;
    const { sidecar, controller } = setup({
      'toolgate/session/new': () => {
        opened += 1;
        return opened === 1 ? new Promise(() => undefined) : { sessionId: 's2', mode: 'default', title: '' };
      },
      'toolgate/session/list': () => ({ sessions: [] }),
      'toolgate/chat/send': () => ({ stopReason: 'end_turn' }),
    });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await settle();
    void controller.handle({ type: 'newSession' });
    await settle();
    controller.sidecarChanged({ kind: 'restarting', attempt: 1, maxAttempts: 5, delayMs: 500, reason: 'killed by SIGKILL' });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: true });
    await settle();
    void controller.handle({ type: 'send', text: 'hi' });
    await settle();
    expect(sidecar.calls.find((call) => call.method === 'toolgate/chat/send')?.params).toEqual({ sessionId: 's2', text: 'hi' });
  });

  it('ends the turn with a word when the sidecar is stopped on purpose in the middle of it', async () => {
    const { store, controller } = setup({
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'default', title: '' }),
      'toolgate/chat/send': () => new Promise(() => undefined),
    });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await settle();
    void controller.handle({ type: 'send', text: 'go' });
    await settle();
    controller.sidecarChanged({ kind: 'stopped' });
    expect(store.state.busy).toBe(false);
    expect(store.state.items.at(-1)).toMatchObject({ kind: 'notice', text: expect.stringContaining('ended the turn') });
  });

  it('reopens the session on screen in a restarted sidecar, or lets the next message start a new one', async () => {
    const reopening = setup({ 'toolgate/session/load': () => ({ sessionId: 's1', mode: 'plan', title: 't' }) });
    reopening.store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    reopening.store.dispatch({ type: 'userMessage', text: 'earlier' });
    reopening.controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: true });
    await settle();
    expect(reopening.sidecar.calls.map((call) => call.method)).toEqual([
      'toolgate/provider/configure',
      'toolgate/session/load',
      'toolgate/settings/get',
      'toolgate/session/list',
    ]);
    expect(reopening.store.state).toMatchObject({ sessionId: 's1', mode: 'plan' });
    expect(reopening.store.state.items[0]).toMatchObject({ kind: 'user', text: 'earlier' }); // transcript kept

    const lost = setup({});
    lost.store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    lost.controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await settle();
    expect(lost.store.state.sessionId).toBeNull();
    expect(lost.store.state.items.at(-1)).toMatchObject({ kind: 'notice', level: 'warning' });
  });

  it('configures the provider in a new sidecar and shows what the sidecar says about it', async () => {
    const { store, sidecar, controller } = setup({
      'toolgate/provider/configure': (params) => ({
        ...(params as object),
        model: 'gpt-default',
        hasKey: false,
        message: 'Using http://127.0.0.1:9/v1 without an API key (fine for local servers such as Ollama).',
      }),
    });
    controller.sidecarChanged({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    await settle();
    expect(sidecar.calls[0]).toEqual({
      method: 'toolgate/provider/configure',
      params: { provider: 'openai', model: null, baseUrl: 'http://127.0.0.1:9/v1', apiKey: null },
    });
    expect(store.state.provider).toEqual({
      provider: 'openai',
      model: 'gpt-default',
      baseUrl: 'http://127.0.0.1:9/v1',
      hasApiKey: false,
      message: 'Using http://127.0.0.1:9/v1 without an API key (fine for local servers such as Ollama).',
    });
  });

  it('applies a settings change: a restart when only a new process can take it, else tells the running sidecar', async () => {
    const configure = (params: unknown) => ({ ...(params as object), model: 'm', hasKey: false, message: '' });
    const { store, sidecar, controller, restarts, logged } = setup({
      'toolgate/provider/configure': configure,
      'toolgate/settings/setReviewEdits': () => ({}),
    });
    store.dispatch({ type: 'sessionOpened', sessionId: 's1', mode: 'default', messages: [], todos: [], busy: false });
    await controller.settingsChanged({ restart: true, provider: true, reviewEdits: true });
    expect(restarts).toEqual([1]);
    expect(logged).toEqual(['settings changed: restarting the sidecar']);
    expect(sidecar.calls).toEqual([]); // the new process is configured when it runs
    expect(store.state.provider).toMatchObject({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', hasApiKey: false });

    await controller.settingsChanged({ restart: false, provider: true, reviewEdits: true });
    expect(sidecar.calls.map((call) => [call.method, call.params])).toEqual([
      ['toolgate/provider/configure', { provider: 'openai', model: null, baseUrl: 'http://127.0.0.1:9/v1', apiKey: null }],
      ['toolgate/settings/setReviewEdits', { sessionId: 's1', reviewEdits: 'always' }],
    ]);
    await controller.settingsChanged({ restart: false, provider: false, reviewEdits: false });
    expect(sidecar.calls).toHaveLength(2);
    expect(restarts).toEqual([1]);
  });

  it('shows the provider line from the settings once the keys are read, unless a sidecar speaks for it', () => {
    const { store, controller } = setup({});
    controller.keysRead({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    expect(store.state.provider.baseUrl).toBe('');
    controller.keysRead({ kind: 'starting', attempt: 0 });
    expect(store.state.provider).toMatchObject({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', hasApiKey: false });
  });

  it('opens a saved session with its history', async () => {
    const { store, controller } = setup({
      'toolgate/session/load': () => ({ sessionId: 's9', mode: 'acceptEdits', title: 'Old work' }),
      'toolgate/chat/history': () => ({
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello again' }] }],
        todos: [],
        busy: false,
      }),
    });
    await controller.handle({ type: 'openSession', sessionId: 's9' });
    expect(store.state).toMatchObject({ sessionId: 's9', mode: 'acceptEdits' });
    expect(store.state.items).toMatchObject([{ kind: 'user', text: 'hello again' }]);
  });

  it('draws the open session again from its history (a conversation restore cut it back)', async () => {
    let said = ['first', 'second'];
    const { store, controller } = setup({
      'toolgate/session/load': () => ({ sessionId: 's9', mode: 'acceptEdits', title: 'Old work' }),
      'toolgate/chat/history': () => ({
        messages: said.map((text) => ({ role: 'user', content: [{ type: 'text', text }] })),
        todos: [],
        busy: false,
      }),
    });
    await controller.handle({ type: 'openSession', sessionId: 's9' });
    said = ['first'];
    await controller.sessions.reload();
    expect(store.state).toMatchObject({ sessionId: 's9', mode: 'acceptEdits' });
    expect(store.state.items).toMatchObject([{ kind: 'user', text: 'first' }]);
  });

  it('sends a message typed while New opens a session to that session, not the old one or a third', async () => {
    let open: (info: { sessionId: string; mode: string; title: string }) => void = () => undefined;
    const { store, sidecar, controller } = setup({
      'toolgate/session/new': () => new Promise((resolve) => (open = resolve)),
      'toolgate/session/list': () => ({ sessions: [] }),
      'toolgate/chat/send': () => ({ stopReason: 'end_turn' }),
    });
    store.dispatch({ type: 'sessionOpened', sessionId: 'old', mode: 'default', messages: [], todos: [], busy: false });
    const pressedNew = controller.handle({ type: 'newSession' });
    const sent = controller.handle({ type: 'send', text: 'hi' });
    await settle();
    expect(sidecar.calls.filter((call) => call.method === 'toolgate/chat/send')).toEqual([]);
    open({ sessionId: 'fresh', mode: 'acceptEdits', title: '' });
    await Promise.all([pressedNew, sent]);
    expect(sidecar.calls.filter((call) => call.method === 'toolgate/session/new')).toHaveLength(1);
    expect(sidecar.calls.find((call) => call.method === 'toolgate/chat/send')?.params).toEqual({
      sessionId: 'fresh',
      text: 'hi',
    });
    expect(store.state.sessionId).toBe('fresh');
    expect(store.state.items.map((item) => [item.kind, 'text' in item ? item.text : ''])).toEqual([['user', 'hi']]);
  });

  it('shows the settings problems of a new session in the banner', async () => {
    const broken = '/ws/.toolgate/settings.json:3:14: permissions.allow: Input should be a valid list';
    const { store, controller } = setup({
      'toolgate/session/new': () => ({ sessionId: 's1', mode: 'default', title: '' }),
      'toolgate/session/list': () => ({ sessions: [] }),
      'toolgate/settings/get': () => ({
        sessionId: 's1',
        mode: 'default',
        reviewEdits: 'when_asking',
        rules: [],
        settingsFiles: { project: '/ws/.toolgate/settings.json' },
        flagFiles: [],
        problems: [
          { file: null, line: null, column: null, rule: null, message: 'a hook matcher is not a valid pattern' },
          { file: '/ws/.toolgate/settings.json', line: 3, column: 14, rule: null, message: broken },
          { file: '/ws/.toolgate/settings.local.json', line: null, column: null, rule: null, message: 'untrusted' },
        ],
      }),
    });
    await controller.handle({ type: 'newSession' });
    await settle();
    expect(store.state.settingsProblems).toEqual([
      { text: 'a hook matcher is not a valid pattern', file: null, line: null, column: null },
      { text: broken, file: '/ws/.toolgate/settings.json', line: 3, column: 14 },
      { text: 'untrusted', file: '/ws/.toolgate/settings.local.json', line: null, column: null },
    ]);
  });

  it('ignores settings of a session that is no longer on screen, and clears the banner when all is well', async () => {
    const { store, controller } = setup({});
    store.dispatch({ type: 'sessionOpened', sessionId: 's2', mode: 'default', messages: [], todos: [], busy: false });
    const problem = { file: null, line: null, column: null, rule: null, message: 'x' };
    const settings = {
      sessionId: 's1',
      mode: 'default' as const,
      reviewEdits: 'always' as const,
      rules: [],
      settingsFiles: {},
      flagFiles: [],
      problems: [problem],
      sandbox: null,
    };
    controller.sessions.showSettings(settings);
    expect(store.state.settingsProblems).toEqual([]);
    controller.sessions.showSettings({ ...settings, sessionId: 's2' });
    expect(store.state.settingsProblems).toHaveLength(1);
    controller.sessions.showSettings({ ...settings, sessionId: 's2', problems: [] });
    expect(store.state.settingsProblems).toEqual([]);
    const sandbox = { state: 'unavailable' as const, autoAllow: false, detail: 'bwrap was not found on PATH', network: [] };
    controller.sessions.showSettings({ ...settings, sessionId: 's2', sandbox });
    expect(store.state.sandbox).toEqual(sandbox);
    controller.sessions.showSettings({ ...settings, sessionId: 's1', sandbox: { ...sandbox, state: 'on' } });
    expect(store.state.sandbox).toEqual(sandbox); // another session's sandbox is not this one's
  });

  it('saves an edited "always allow" rule through settings/addRule before allowing', async () => {
    const store = newStore();
    const sidecar = new FakeSidecar({
      'toolgate/settings/addRule': (params) => {
        const { rule } = params as { rule: string };
        if (!rule.endsWith(')')) throw Object.assign(new Error(`The rule '${rule}' was not changed: not closed`), { code: -32602 });
        return { changed: true, file: null, warnings: [], coversCall: true, settings: {} };
      },
      'toolgate/permissions/check': (params) => {
        const { withAllow } = params as { withAllow: string };
        if (!withAllow.endsWith(')')) throw Object.assign(new Error(`The rule '${withAllow}' cannot be used`), { code: -32602 });
        return { decision: 'allow', readOnly: true, reason: 'allowed by a rule', rule: withAllow };
      },
    });
    const client = new SidecarClient(() => sidecar, {
      onRequest: (method, handler) => sidecar.requestHandlers.set(method, handler),
      onNotification: (method, handler) => sidecar.notificationHandlers.set(method, handler),
    });
    // The same wiring as extension.ts: the broker saves rules with the client.
    const approvals = new ApprovalBroker(store, new FakePresence(true), new FakeNotifier(), sidecarRuleSaver(client, async () => undefined));
    const answer = approvals.request(
      approvalRequest({ input: { command: 'ls -l' }, summary: 'ls -l', suggestions: [{ rule: 'Bash(ls -l)', scope: 'local' }] }),
    );
    const id = store.state.items[0]?.id ?? '';
    await approvals.answer(id, { kind: 'always', rule: 'Bash(ls:*', scope: 'local' });
    expect(store.state.items[0]).toMatchObject({ state: 'pending', error: "The rule 'Bash(ls:*' was not changed: not closed" });
    await approvals.answer(id, { kind: 'always', rule: 'Bash(ls:*)', scope: 'local' });
    await expect(answer).resolves.toEqual({ decision: 'allow' });
    // Per attempt: would the unsaved rule cover the waiting call (a failed check says nothing), then save it.
    const waiting = { tool: 'Bash', input: { command: 'ls -l' } };
    const check = { sessionId: 's1', tool: 'Bash', input: { command: 'ls -l' } };
    expect(sidecar.calls.map((call) => [call.method, call.params])).toEqual([
      ['toolgate/permissions/check', { ...check, withAllow: 'Bash(ls:*' }],
      ['toolgate/settings/addRule', { sessionId: 's1', rule: 'Bash(ls:*', behavior: 'allow', scope: 'local', call: waiting }],
      ['toolgate/permissions/check', { ...check, withAllow: 'Bash(ls:*)' }],
      ['toolgate/settings/addRule', { sessionId: 's1', rule: 'Bash(ls:*)', behavior: 'allow', scope: 'local', call: waiting }],
    ]);
    expect(store.state.items[0]).toMatchObject({ state: 'allowed' });
    expect((store.state.items[0] as { outcome?: string }).outcome).not.toContain('does not cover');
  });

  it('lists sessions when the sidecar has them, and marks them unavailable when not', async () => {
    const withSessions = setup({
      'toolgate/session/list': () => ({ sessions: [{ sessionId: 's1', title: 'Fix tests', updatedAt: '2026-01-01T00:00:00Z' }] }),
    });
    await withSessions.controller.sessions.refreshList();
    expect(withSessions.store.state).toMatchObject({ sessionsAvailable: true, sessions: [{ title: 'Fix tests' }] });
    const without = setup({});
    await without.controller.sessions.refreshList();
    expect(without.store.state.sessionsAvailable).toBe(false);
    expect(without.store.state.items).toHaveLength(0); // "not supported" is not worth a notice here
  });
});

describe('sidecarStatus', () => {
  it('describes each state in a sentence, with the fix and actions when unavailable', () => {
    expect(sidecarStatus({ kind: 'running', python, server: { name: 'toolgate', version: '0.1.0' }, recovered: false })).toEqual({
      state: 'ready',
      detail: 'toolgate 0.1.0 · Python 3.11.7',
    });
    const failed = sidecarStatus({ kind: 'failed', reason: 'it stopped 6 times within 3 min', detail: 'a\nb\nModuleNotFoundError: x' });
    expect(failed).toMatchObject({ state: 'unavailable', actions: ['restartSidecar', 'showLog'] });
    expect(failed.state === 'unavailable' && failed.fix).toContain('ModuleNotFoundError: x');
    const unavailable = sidecarStatus({
      kind: 'unavailable',
      python: { ok: false, candidate: python.candidate, problem: 'notFound', message: 'toolgate could not find python3 on PATH.', fix: 'Set it.', actions: ['openPythonSetting'] },
    });
    expect(unavailable).toEqual({
      state: 'unavailable',
      detail: 'The toolgate sidecar is unavailable: toolgate could not find python3 on PATH.',
      fix: 'Set it.',
      actions: ['openPythonSetting', 'restartSidecar'],
    });
  });
});
