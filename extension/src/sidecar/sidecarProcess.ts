/**
 * The sidecar's OS process, owned by the extension (not by vscode-languageclient) so that it can always be ended:
 * the client cannot stop a server that is still starting, and a process that ignores the shutdown request must not
 * outlive the editor. It stays in the extension host's process group, so whatever ends the host's group ends it too.
 */

import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export function describeExit(exit: Exit): string {
  if (exit.signal) return `the sidecar process was ended by ${exit.signal}`;
  if (exit.code === null) return 'the sidecar process could not be started';
  return `the sidecar process exited with status ${String(exit.code)}`;
}

export class SidecarProcess {
  readonly exited: Promise<Exit>;
  private exit: Exit | undefined;

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null): void => {
        this.exit ??= { code, signal };
        resolve(this.exit);
      };
      child.once('exit', done);
      // A program that cannot be started never exits; report it as a failed exit instead.
      child.once('error', () => done(null, null));
    });
  }

  static spawn(command: string, args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): SidecarProcess {
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    return new SidecarProcess(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exit === undefined && this.child.pid !== undefined;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  async terminate(graceMs: number): Promise<Exit | undefined> {
    if (!this.alive) return this.exit;
    this.child.kill('SIGTERM');
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([this.exited, timer])) === 'timeout' && this.alive) this.child.kill('SIGKILL');
    return this.exited;
  }
}
