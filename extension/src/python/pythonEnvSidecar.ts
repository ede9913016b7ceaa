/**
 * The Python the sidecar starts on. By default toolgate's private environment, built from the chosen base
 * interpreter (pythonEnvSetup.ts); with `toolgate.python.useInterpreterDirectly` the chosen interpreter itself, which
 * must then have the toolgate package installed (the behaviour before the private environment existed).
 */

import type { RunProcess } from './processes';
import type { PythonCheck, PythonDiscovery } from './python';
import { checkPython, choosePython } from './python';
import type { EnvSetupDeps } from './pythonEnvSetup';
import { ensureEnvironment, wheelhouse } from './pythonEnvSetup';

/** Shows that the environment is being built: a notification with progress, closed by `done`. */
export interface SetupProgressUi {
  begin(title: string): { report(step: string): void; done(): void };
}

export interface SidecarPythonDeps {
  discovery(): PythonDiscovery;
  useInterpreterDirectly(): boolean;
  run: RunProcess;
  /** Where the extension is installed: the probes run there, so a `toolgate` folder in the workspace cannot shadow it. */
  extensionPath: string;
  env: Omit<EnvSetupDeps, 'run' | 'progress'>;
  ui: SetupProgressUi;
}

export const SETUP_TITLE = "Setting up toolgate's Python environment…";
/** The notification shows "<title>: <step>", so its title has no ellipsis of its own. */
export const NOTIFICATION_TITLE = "Setting up toolgate's Python environment";

export class SidecarPython {
  private forceRebuild = false;

  constructor(private readonly deps: SidecarPythonDeps) {}

  /** The next check builds a new environment even if the one in use fits ("toolgate: Rebuild Python Environment"). */
  rebuildNext(): void {
    this.forceRebuild = true;
  }

  /** Choose and check the Python; `progress` gets each setup step, for the chat's status line. */
  async check(progress: (step: string) => void = () => {}): Promise<PythonCheck> {
    const { deps } = this;
    const candidate = await choosePython(deps.discovery());
    const options = { packageDir: deps.env.packageDir, cwd: deps.extensionPath };
    if (deps.useInterpreterDirectly()) return checkPython(candidate, deps.run, options);
    const needsEnsurepip = wheelhouse(deps.env.packageDir)?.pipWheel === undefined;
    const base = await checkPython(candidate, deps.run, { ...options, purpose: 'base', needsEnsurepip });
    if (!base.ok) return base;
    const force = this.forceRebuild;
    this.forceRebuild = false;
    let shown: ReturnType<SetupProgressUi['begin']> | undefined;
    try {
      return await ensureEnvironment(
        base,
        {
          ...deps.env,
          run: deps.run,
          progress: (step) => {
            if (!shown) {
              shown = deps.ui.begin(NOTIFICATION_TITLE);
              progress(SETUP_TITLE);
            }
            shown.report(step);
            progress(`${SETUP_TITLE} ${step}`);
          },
        },
        force,
      );
    } finally {
      shown?.done();
    }
  }
}
