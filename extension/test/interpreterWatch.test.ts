import { describe, expect, it } from 'vitest';

import { INTERPRETER_DEBOUNCE_MS, InterpreterWatch, needsRestartFor } from '../src/python/interpreterWatch';
import type { PythonOk } from '../src/python/python';
import type { SidecarState } from '../src/sidecar/sidecar';
import { onPythonInterpreterChanged } from '../src/vscode/vscodeApi';
import { FakeTimers, settle } from './fakes';
import * as mock from './vscodeMock';

const fromExtension: PythonOk = {
  ok: true,
  candidate: { command: '/venvs/a/bin/python', source: 'pythonExtension' },
  executable: '/usr/lib/python3.11/bin/python3.11',
  version: '3.11.7',
  toolgateVersion: '0.1.0',
};
const running = (python: PythonOk): SidecarState => ({ kind: 'running', python, server: { name: 'toolgate' }, recovered: false });

describe('needsRestartFor', () => {
  it('restarts a sidecar on another interpreter than the one selected', () => {
    expect(needsRestartFor('/venvs/b/bin/python', '', running(fromExtension))).toBe(true);
    const onDefault: PythonOk = { ...fromExtension, candidate: { command: 'python3', source: 'default' } };
    expect(needsRestartFor('/venvs/a/bin/python', '', running(onDefault))).toBe(true);
  });

  it('leaves a sidecar alone that already runs on the selection (by its path or its executable)', () => {
    expect(needsRestartFor('/venvs/a/bin/python', '', running(fromExtension))).toBe(false);
    expect(needsRestartFor('/usr/lib/python3.11/bin/python3.11', '', running(fromExtension))).toBe(false);
  });

  it('never overrides toolgate.python.path, and does not start a stopped sidecar', () => {
    expect(needsRestartFor('/venvs/b/bin/python', '/opt/py/bin/python', running(fromExtension))).toBe(false);
    expect(needsRestartFor('/venvs/b/bin/python', '', { kind: 'stopped' })).toBe(false);
  });

  it('retries a sidecar that could not use its Python: the new selection may be the fix', () => {
    const unavailable: SidecarState = {
      kind: 'unavailable',
      python: {
        ok: false,
        candidate: fromExtension.candidate,
        problem: 'noToolgate',
        message: 'toolgate is not installed',
        fix: 'install it',
        actions: [],
      },
    };
    expect(needsRestartFor('/venvs/b/bin/python', '', unavailable)).toBe(true);
    expect(needsRestartFor('', '', { kind: 'failed', reason: 'x', detail: '' })).toBe(true);
    expect(needsRestartFor('/venvs/b/bin/python', '', { kind: 'starting', attempt: 0 })).toBe(true);
  });
});

function watch(state: SidecarState, settingPath = '') {
  const timers = new FakeTimers();
  const manager = { state, restarts: 0, async restart() { manager.restarts++; } };
  const notices: string[] = [];
  const watcher = new InterpreterWatch({
    settingPath: () => settingPath,
    manager,
    timers,
    notify: (text) => notices.push(text),
    log: () => undefined,
  });
  return { watcher, manager, timers, notices };
}

describe('InterpreterWatch', () => {
  it('restarts the sidecar once for a burst of changes, and says why in the chat', async () => {
    const { watcher, manager, timers, notices } = watch(running(fromExtension));
    watcher.changed('/venvs/b/bin/python');
    watcher.changed('/venvs/c/bin/python');
    timers.advance(INTERPRETER_DEBOUNCE_MS - 1);
    expect(manager.restarts).toBe(0);
    timers.advance(1);
    await settle();
    expect(manager.restarts).toBe(1);
    expect(notices).toEqual([
      "The Python extension's interpreter changed to /venvs/c/bin/python: restarting the sidecar with it (toolgate.python.path is not set).",
    ]);
  });

  it('does nothing when the setting names the Python, or when the selection is already in use', async () => {
    const pinned = watch(running(fromExtension), '/opt/py/bin/python');
    pinned.watcher.changed('/venvs/b/bin/python');
    pinned.timers.advance(INTERPRETER_DEBOUNCE_MS);
    const same = watch(running(fromExtension));
    same.watcher.changed('/venvs/a/bin/python');
    same.timers.advance(INTERPRETER_DEBOUNCE_MS);
    await settle();
    expect([pinned.manager.restarts, same.manager.restarts]).toEqual([0, 0]);
    expect([...pinned.notices, ...same.notices]).toEqual([]);
  });

  it('forgets a pending change when disposed', async () => {
    const { watcher, manager, timers } = watch(running(fromExtension));
    watcher.changed('/venvs/b/bin/python');
    watcher.dispose();
    timers.advance(INTERPRETER_DEBOUNCE_MS);
    await settle();
    expect(manager.restarts).toBe(0);
  });
});

/** A Python extension whose API has the environments event, like ms-python.python has. */
function pythonExtension(active: boolean) {
  const changes = new mock.EventEmitter<{ id: string; path: string } | undefined>();
  const exports = { environments: { onDidChangeActiveEnvironmentPath: changes.event } };
  const extension: mock.MockExtension & { activations: number } = {
    isActive: active,
    exports,
    activations: 0,
    async activate() {
      extension.activations++;
      extension.isActive = true;
      return exports;
    },
  };
  return { extension, changes };
}

describe('onPythonInterpreterChanged (the Python extension through vscode.extensions)', () => {
  it('follows the active environment of an installed Python extension, activating it if needed', async () => {
    const { extension, changes } = pythonExtension(false);
    mock.extensions.install('ms-python.python', extension);
    const seen: string[] = [];
    const subscription = onPythonInterpreterChanged((path) => seen.push(path));
    await settle();
    expect(extension.activations).toBe(1);
    changes.fire({ id: 'b', path: '/venvs/b/bin/python' });
    subscription.dispose();
    changes.fire({ id: 'c', path: '/venvs/c/bin/python' }); // no longer listened to
    expect(seen).toEqual(['/venvs/b/bin/python']);
    mock.extensions.install('ms-python.python', undefined);
  });

  it('picks up a Python extension installed later, once', async () => {
    const seen: string[] = [];
    const subscription = onPythonInterpreterChanged((path) => seen.push(path));
    const { extension, changes } = pythonExtension(true);
    mock.extensions.install('ms-python.python', extension);
    mock.extensions.install('some.other', { isActive: true, exports: undefined, activate: async () => undefined });
    await settle();
    changes.fire({ id: 'b', path: '/venvs/b/bin/python' });
    expect(seen).toEqual(['/venvs/b/bin/python']); // one subscription, however often extensions change
    subscription.dispose();
    mock.extensions.install('ms-python.python', undefined);
  });
});
