import { describe, expect, it } from 'vitest';

import { SidecarProcess, describeExit } from '../src/sidecar/sidecarProcess';

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('SidecarProcess (real processes)', () => {
  it('reports how the process exited', async () => {
    const child = SidecarProcess.spawn('sh', ['-c', 'echo oops >&2; exit 2'], { env: process.env });
    const exit = await child.exited;
    expect(exit).toEqual({ code: 2, signal: null });
    expect(describeExit(exit)).toBe('the sidecar process exited with status 2');
    expect(child.alive).toBe(false);
  });

  it('terminates a process politely first', async () => {
    const child = SidecarProcess.spawn('sleep', ['30'], { env: process.env });
    expect(child.alive).toBe(true);
    const exit = await child.terminate(5_000);
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(alive(child.pid)).toBe(false);
  });

  it('kills a process that ignores SIGTERM once the grace period is over', async () => {
    // The shell ignores TERM and execs into a sleep that inherits the ignored disposition.
    const child = SidecarProcess.spawn('sh', ['-c', "trap '' TERM; echo ready; exec sleep 30"], { env: process.env });
    await new Promise<void>((resolve) => child.child.stdout.once('data', () => resolve()));
    const started = Date.now();
    const exit = await child.terminate(300);
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(alive(child.pid)).toBe(false);
  });

  it('reports a program that does not exist as exited', async () => {
    const child = SidecarProcess.spawn('/no/such/python', [], { env: process.env });
    const exit = await child.exited;
    expect(exit).toEqual({ code: null, signal: null });
    expect(describeExit(exit)).toBe('the sidecar process could not be started');
    expect(child.alive).toBe(false);
  });
});
