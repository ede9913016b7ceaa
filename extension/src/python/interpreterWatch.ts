/**
 * Follow the Python extension's interpreter. When `toolgate.python.path` is not set, the sidecar runs on (an
 * environment built from) the interpreter selected in the Python extension (python.ts, pythonEnvSidecar.ts); when the
 * person selects another one, the sidecar restarts on it, as it does when the setting changes. A burst of change events (one per workspace folder, or a
 * quick succession of picks) restarts it once.
 */

import type { Disposable, Timers } from '../host';
import type { SidecarState } from '../sidecar/sidecar';

/** Whether a newly selected interpreter should replace the sidecar's Python. */
export function needsRestartFor(interpreter: string, settingPath: string, state: SidecarState): boolean {
  if (settingPath) return false; // the setting wins over the Python extension: its selection changes nothing
  switch (state.kind) {
    case 'stopped':
      return false; // not started yet, or shut down: the next start chooses afresh
    case 'running': {
      const { candidate, executable } = state.python;
      const same = candidate.source === 'pythonExtension' && (interpreter === candidate.command || interpreter === executable);
      return !same;
    }
    default:
      // Starting (perhaps on the old interpreter), restarting, failed, or unusable: the new choice may be the fix.
      return true;
  }
}

export interface InterpreterWatchDeps {
  /** `toolgate.python.path` as resolved now; empty when unset. */
  settingPath(): string;
  manager: { readonly state: SidecarState; restart(): Promise<void> };
  timers: Timers;
  /** Say in the chat why the sidecar restarts. */
  notify(text: string): void;
  log(line: string): void;
}

export const INTERPRETER_DEBOUNCE_MS = 500;

export class InterpreterWatch implements Disposable {
  private timer: Disposable | undefined;
  private latest = '';

  constructor(private readonly deps: InterpreterWatchDeps) {}

  /** The Python extension reports a new active interpreter (its path; '' when it does not say which). */
  changed(interpreter: string): void {
    this.latest = interpreter;
    this.timer?.dispose();
    this.timer = this.deps.timers.setTimeout(() => {
      this.timer = undefined;
      void this.apply(this.latest);
    }, INTERPRETER_DEBOUNCE_MS);
  }

  dispose(): void {
    this.timer?.dispose();
    this.timer = undefined;
  }

  private async apply(interpreter: string): Promise<void> {
    const { manager, settingPath } = this.deps;
    if (!needsRestartFor(interpreter, settingPath(), manager.state)) {
      this.deps.log(`the Python extension selected ${interpreter || 'another interpreter'}; the sidecar stays as it is`);
      return;
    }
    this.deps.log(`the Python extension selected ${interpreter || 'another interpreter'}: restarting the sidecar`);
    this.deps.notify(
      `The Python extension's interpreter changed${interpreter ? ` to ${interpreter}` : ''}: restarting the sidecar ` +
        'with it (toolgate.python.path is not set).',
    );
    await manager.restart();
  }
}
