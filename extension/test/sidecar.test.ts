import { describe, expect, it } from 'vitest';

import type { PythonCheck, PythonOk } from '../src/python/python';
import { RestartPolicy } from '../src/sidecar/restartPolicy';
import type { ConnectionHooks, SidecarConnection, SidecarLaunch } from '../src/sidecar/rpc';
import { SidecarManager } from '../src/sidecar/sidecar';
import type { SidecarState } from '../src/sidecar/sidecar';
import { FakeTimers, deferred, settle } from './fakes';
import type { Deferred } from './fakes';

const python: PythonOk = {
  ok: true,
  candidate: { command: '/venv/bin/python', source: 'setting' },
  executable: '/venv/bin/python',
  version: '3.11.7',
  toolgateVersion: '0.1.0',
};

class FakeProcess implements SidecarConnection {
  readonly started: Deferred<{ name: string; version?: string }> = deferred();
  stopped = false;

  constructor(
    readonly launch: SidecarLaunch,
    readonly hooks: ConnectionHooks,
  ) {}

  start() {
    return this.started.promise;
  }

  async stop() {
    this.stopped = true;
  }

  async sendRequest<R>(): Promise<R> {
    return undefined as R;
  }

  async sendNotification() {}

  /** The process dies. */
  crash(reason = 'the sidecar process exited') {
    this.hooks.onClosed(reason);
  }
}

function setup(options: { python?: PythonCheck; output?: string } = {}) {
  const timers = new FakeTimers();
  const processes: FakeProcess[] = [];
  const states: SidecarState[] = [];
  const manager = new SidecarManager({
    checkPython: async () => options.python ?? python,
    launch: async (checked) => ({
      command: checked.executable,
      args: ['-P', '-m', 'toolgate', 'serve'],
      cwd: '/ws',
      env: {},
      initializationOptions: {} as never,
    }),
    createConnection: (launch, hooks) => {
      const process = new FakeProcess(launch, hooks);
      processes.push(process);
      return process;
    },
    policy: new RestartPolicy({ maxRestarts: 3, windowMs: 60_000, baseDelayMs: 500, maxDelayMs: 1_500, maxStartRetries: 1 }),
    timers,
    recentOutput: () => options.output ?? '',
    log: () => undefined,
  });
  manager.onDidChangeState((state) => states.push(state));
  const last = (): FakeProcess => {
    const process = processes[processes.length - 1];
    if (!process) throw new Error('no process was started');
    return process;
  };
  /** Start the latest process and let the manager see it. */
  const ready = async (): Promise<void> => {
    await settle();
    last().started.resolve({ name: 'toolgate', version: '0.1.0' });
    await settle();
  };
  return { manager, timers, processes, states, last, ready };
}

describe('RestartPolicy', () => {
  const options = { maxRestarts: 3, windowMs: 60_000, baseDelayMs: 500, maxDelayMs: 1_500, maxStartRetries: 1 };

  it('restarts with growing delays, then gives up within the window', () => {
    const policy = new RestartPolicy(options);
    expect(policy.onCrash(0)).toEqual({ restart: true, attempt: 1, maxAttempts: 3, delayMs: 500 });
    expect(policy.onCrash(1_000)).toEqual({ restart: true, attempt: 2, maxAttempts: 3, delayMs: 1_000 });
    expect(policy.onCrash(2_000)).toEqual({ restart: true, attempt: 3, maxAttempts: 3, delayMs: 1_500 });
    expect(policy.onCrash(3_000)).toEqual({ restart: false, why: 'it stopped 4 times within 1 min' });
  });

  it('gives a sidecar that cannot start one more try, not the whole budget', () => {
    const policy = new RestartPolicy(options);
    expect(policy.onCrash(0, true)).toMatchObject({ restart: true, attempt: 1 });
    expect(policy.onCrash(500, true)).toEqual({ restart: false, why: 'it failed to start twice in a row' });
    const recovering = new RestartPolicy(options);
    recovering.onCrash(0, true);
    recovering.onStarted(); // the retry came up: the next failure to start is a first one again
    expect(recovering.onCrash(1_000, true)).toMatchObject({ restart: true, attempt: 2 });
  });

  it('forgets crashes older than the window, and all of them on reset', () => {
    const policy = new RestartPolicy({ ...options, maxRestarts: 2, windowMs: 10_000, baseDelayMs: 100 });
    policy.onCrash(0);
    policy.onCrash(1);
    expect(policy.onCrash(20_000)).toMatchObject({ restart: true, attempt: 1 });
    policy.onCrash(20_001);
    policy.reset();
    expect(policy.onCrash(20_002)).toMatchObject({ restart: true, attempt: 1 });
  });
});

describe('SidecarManager', () => {
  it('starts the sidecar with the checked Python and reports it running', async () => {
    const { manager, last, ready } = setup();
    void manager.start();
    await ready();
    expect(last().launch.command).toBe('/venv/bin/python');
    expect(last().launch.args).toEqual(['-P', '-m', 'toolgate', 'serve']);
    expect(manager.state).toMatchObject({ kind: 'running', recovered: false, server: { version: '0.1.0' } });
    expect(manager.connection).toBe(last());
  });

  it('shows the outage and the recovery after a crash', async () => {
    const { manager, timers, processes, last, ready, states } = setup({ output: 'Traceback…\nRuntimeError: boom' });
    void manager.start();
    await ready();
    last().crash();
    expect(manager.state).toMatchObject({ kind: 'restarting', attempt: 1, maxAttempts: 3, delayMs: 500 });
    expect(manager.state.kind === 'restarting' && manager.state.reason).toContain('RuntimeError: boom');
    expect(manager.connection).toBeUndefined();
    expect(processes[0]?.stopped).toBe(true); // what is left of the dead process is cleaned up
    timers.advance(499);
    expect(processes).toHaveLength(1);
    timers.advance(1);
    await ready();
    expect(processes).toHaveLength(2);
    expect(manager.state).toMatchObject({ kind: 'running', recovered: true });
    expect(states.map((state) => state.kind)).toEqual(['starting', 'running', 'restarting', 'starting', 'running']);
  });

  it('stops restarting after too many crashes and says why', async () => {
    const { manager, timers, last, ready, processes } = setup({ output: 'ImportError: no module named x' });
    void manager.start();
    await ready();
    for (let crash = 1; crash <= 3; crash++) {
      last().crash();
      expect(manager.state.kind).toBe('restarting');
      timers.advance(2_000);
      await ready();
    }
    last().crash();
    expect(manager.state).toMatchObject({ kind: 'failed', detail: 'ImportError: no module named x' });
    expect(manager.state.kind === 'failed' && manager.state.reason).toContain('it stopped 4 times within 1 min');
    timers.advance(60_000);
    await settle();
    expect(processes).toHaveLength(4);
  });

  it('treats a start that fails as a crash, once', async () => {
    const { manager, last, processes, timers, states } = setup({ output: "toolgate: error: invalid choice: 'serve'" });
    void manager.start();
    await settle();
    // The process exits before answering initialize: the "closed" hook and the rejected start both arrive.
    last().crash('the sidecar process exited');
    last().started.reject(new Error('Connection closed'));
    await settle();
    expect(manager.state).toMatchObject({ kind: 'restarting', attempt: 1 });
    expect(manager.state.kind === 'restarting' && manager.state.reason).toContain("invalid choice: 'serve'");
    expect(states.filter((state) => state.kind === 'restarting')).toHaveLength(1);
    timers.advance(500);
    await settle();
    expect(processes).toHaveLength(2);
  });

  it('gives up quickly on a sidecar that cannot start, and says why', async () => {
    const { manager, last, timers, processes } = setup({ output: "toolgate: error: invalid choice: 'serve'" });
    void manager.start();
    await settle();
    last().crash();
    timers.advance(500);
    await settle();
    last().crash();
    expect(processes).toHaveLength(2);
    expect(manager.state).toMatchObject({ kind: 'failed', detail: "toolgate: error: invalid choice: 'serve'" });
    expect(manager.state.kind === 'failed' && manager.state.reason).toContain('it failed to start twice in a row');
  });

  it('treats a rejected start without a closed event as a crash', async () => {
    const { manager, last } = setup();
    void manager.start();
    await settle();
    last().started.reject(new Error('spawn EACCES'));
    await settle();
    expect(manager.state).toMatchObject({ kind: 'restarting', attempt: 1 });
    expect(manager.state.kind === 'restarting' && manager.state.reason).toContain('spawn EACCES');
  });

  it('counts one crash once even when the connection reports it twice', async () => {
    const { manager, last, ready, states } = setup();
    void manager.start();
    await ready();
    last().crash();
    last().crash();
    expect(states.filter((state) => state.kind === 'restarting')).toHaveLength(1);
  });

  it('does not start a sidecar when the Python is unusable, and says what to do', async () => {
    const problem: PythonCheck = {
      ok: false,
      candidate: { command: 'python3', source: 'default' },
      problem: 'noToolgate',
      message: 'toolgate is not installed in python3 on PATH.',
      fix: 'Install it.',
      actions: ['installToolgate'],
    };
    const { manager, processes } = setup({ python: problem });
    await manager.start();
    expect(processes).toHaveLength(0);
    expect(manager.state).toEqual({ kind: 'unavailable', python: problem });
  });

  it('stops cleanly: the process is stopped and a pending restart never happens', async () => {
    const { manager, last, ready, processes, timers } = setup();
    void manager.start();
    await ready();
    last().crash();
    await manager.stop();
    timers.advance(10_000);
    await settle();
    expect(processes).toHaveLength(1);
    expect(manager.state).toEqual({ kind: 'stopped' });

    void manager.start();
    await ready();
    const running = last();
    await manager.stop();
    expect(running.stopped).toBe(true);
    running.crash(); // the exit that follows a deliberate stop is not a crash
    expect(manager.state).toEqual({ kind: 'stopped' });
  });

  it('restarts on request with a clean slate, even after giving up', async () => {
    const { manager, last, ready, timers } = setup();
    void manager.start();
    await ready();
    for (let crash = 0; crash < 4; crash++) {
      last().crash();
      timers.advance(2_000);
      await ready();
    }
    expect(manager.state.kind).toBe('failed');
    void manager.restart();
    await ready();
    expect(manager.state.kind).toBe('running');
    last().crash();
    expect(manager.state).toMatchObject({ kind: 'restarting', attempt: 1 });
  });

  it('gives every process the handlers registered for server requests and notifications', async () => {
    const { manager, last, ready } = setup();
    const handler = async () => ({ decision: 'deny' });
    manager.onRequest('toolgate/approval/request', handler);
    manager.onNotification('toolgate/chat/event', () => undefined);
    void manager.start();
    await ready();
    expect(last().hooks.requestHandlers.get('toolgate/approval/request')).toBe(handler);
    expect([...last().hooks.notificationHandlers.keys()]).toEqual(['toolgate/chat/event']);
  });

  it('ignores a start request while already running', async () => {
    const { manager, ready, processes } = setup();
    void manager.start();
    await ready();
    await manager.start();
    expect(processes).toHaveLength(1);
  });
});
