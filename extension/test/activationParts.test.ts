import { describe, expect, it } from 'vitest';

import { Relay } from '../src/host';
import { LiveSettings } from '../src/settings/liveSettings';
import { PendingBadge } from '../src/review/pendingBadge';
import type { PythonFailure, PythonOk } from '../src/python/python';
import { SidecarNotices } from '../src/sidecar/sidecarNotices';
import { FakeNotifier, FakePresence, newStore, settle } from './fakes';

const python: PythonOk = {
  ok: true,
  candidate: { command: '/venv/bin/python', source: 'setting' },
  executable: '/venv/bin/python',
  version: '3.12.1',
  toolgateVersion: '0.1.0',
};

const missing: PythonFailure = {
  ok: false,
  candidate: { command: 'python3', source: 'default' },
  problem: 'notFound',
  message: 'toolgate could not find python3 on PATH.',
  fix: 'Set toolgate.python.path.',
  actions: ['openPythonSetting'],
};

function setup(extensionVersion = '0.1.0') {
  const notifier = new FakeNotifier();
  const store = newStore();
  const pythonProblems: PythonFailure[] = [];
  const calls: string[] = [];
  const notices = new SidecarNotices({
    notifier,
    store,
    extensionVersion,
    packageDir: '/ext/python',
    notifyPythonProblem: async (problem) => {
      pythonProblems.push(problem);
    },
    showLog: () => calls.push('log'),
    restart: async () => {
      calls.push('restart');
    },
  });
  return { notices, notifier, store, pythonProblems, calls };
}

describe('SidecarNotices', () => {
  it('says in the chat when the sidecar package is another version than the extension, with the install command', () => {
    const { notices, store } = setup('0.2.0');
    notices.changed({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    expect(store.state.items).toHaveLength(1);
    const [notice] = store.state.items;
    expect(notice).toMatchObject({ kind: 'notice', level: 'warning' });
    const text = notice && 'text' in notice ? notice.text : '';
    expect(text).toContain('The toolgate package in this Python is version 0.1.0; this extension is 0.2.0.');
    expect(text).toContain('/venv/bin/python');
    expect(text).toContain('/ext/python');
  });

  it('says nothing when the versions match', () => {
    const { notices, store, notifier } = setup('0.1.0');
    notices.changed({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    expect(store.state.items).toEqual([]);
    expect(notifier.shown).toEqual([]);
  });

  it('offers the log and a restart when the sidecar failed, and does what is picked', async () => {
    const { notices, notifier, calls } = setup();
    notices.changed({ kind: 'failed', reason: 'it exited 3 times in a minute', detail: '' });
    expect(notifier.shown.map((shown) => [shown.level, shown.message, shown.actions])).toEqual([
      ['error', 'The toolgate sidecar is unavailable: it exited 3 times in a minute.', ['Show Log', 'Restart Sidecar']],
    ]);
    notifier.click('Show Log');
    await settle();
    notices.changed({ kind: 'failed', reason: 'again', detail: '' });
    notifier.click('Restart Sidecar');
    await settle();
    expect(calls).toEqual(['log', 'restart']);
  });

  it('offers the fix for a Python problem once, until the sidecar runs again', () => {
    const { notices, pythonProblems } = setup();
    notices.changed({ kind: 'unavailable', python: missing });
    notices.changed({ kind: 'unavailable', python: missing }); // the same problem again: no second notification
    notices.changed({ kind: 'unavailable', python: { ...missing, message: 'Python 3.8 is too old.' } });
    notices.changed({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });
    notices.changed({ kind: 'unavailable', python: missing });
    expect(pythonProblems.map((problem) => problem.message)).toEqual([
      'toolgate could not find python3 on PATH.',
      'Python 3.8 is too old.',
      'toolgate could not find python3 on PATH.',
    ]);
  });
});

describe('LiveSettings', () => {
  it('reads the settings, warns about ignored values, and says what a change means', async () => {
    const values: Record<string, unknown> = { provider: 'openai', diffReview: 'nonsense' };
    const secrets: Record<string, string> = {};
    const notifier = new FakeNotifier();
    const logged: string[] = [];
    const live = new LiveSettings({
      read: (key) => values[key],
      secrets: { get: async (key) => secrets[key] },
      notifier,
      env: {},
      log: (line) => logged.push(line),
    });
    expect(live.current.provider).toBe('openai');
    expect(notifier.shown.map((shown) => shown.level)).toEqual(['warning']);
    expect(logged[0]).toContain('toolgate.diffReview');
    expect(live.hasKey()).toBe(false);

    values.model = 'gpt-x';
    expect(await live.reload(false)).toEqual({ restart: false, provider: true, reviewEdits: false });
    secrets['toolgate.apiKey.openai'] = 'sk-1';
    expect(live.hasKey()).toBe(false); // not read yet
    expect(await live.reload(true)).toEqual({ restart: true, provider: false, reviewEdits: false });
    expect(live.hasKey()).toBe(true);
    expect(live.keys).toEqual({ openai: 'sk-1' });
  });

  it('counts a key from the environment', () => {
    const live = new LiveSettings({
      read: () => undefined,
      secrets: { get: async () => undefined },
      notifier: new FakeNotifier(),
      env: { ANTHROPIC_API_KEY: 'sk-ant' },
      log: () => undefined,
    });
    expect(live.hasKey()).toBe(true);
  });
});

describe('PendingBadge and Relay', () => {
  it('shows the total of every tracked source', () => {
    const presence = new FakePresence(true);
    const badge = new PendingBadge(presence);
    const approvals = { pendingCount: 1 };
    const reviews = { pendingCount: 0 };
    badge.track(approvals, reviews);
    badge.update();
    expect(presence.badge).toEqual({ count: 1, tooltip: 'toolgate is waiting for your answer' });
    reviews.pendingCount = 2;
    badge.update();
    expect(presence.badge).toEqual({ count: 3, tooltip: 'toolgate is waiting for 3 answers' });
  });

  it('refuses a message before its handler is connected, and delivers after', async () => {
    const relay = new Relay<string>();
    await expect(relay.deliver('early')).rejects.toThrow('before its handler was connected');
    const got: string[] = [];
    relay.connect(async (value) => {
      got.push(value);
    });
    await relay.deliver('late');
    expect(got).toEqual(['late']);
  });
});
