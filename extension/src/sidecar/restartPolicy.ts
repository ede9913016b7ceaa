/**
 * When to restart a sidecar that died: at most `maxRestarts` crashes within a sliding `windowMs`, each restart
 * waiting twice as long as the one before (from `baseDelayMs` up to `maxDelayMs`). A sidecar that crashes more
 * often than that is broken, not unlucky: restarting it again would only hide the problem, so we stop and say so.
 *
 * A sidecar that dies before it ever answered `initialize` is usually broken in a way that repeats (a missing
 * command, an import error): it gets `maxStartRetries` more tries in a row, then the problem is shown at once
 * instead of after a minute of futile restarts.
 */

export interface RestartPolicyOptions {
  maxRestarts: number;
  windowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxStartRetries: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  maxRestarts: 5,
  windowMs: 3 * 60_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxStartRetries: 1,
};

export type RestartDecision =
  | { restart: true; attempt: number; maxAttempts: number; delayMs: number }
  | { restart: false; why: string };

export class RestartPolicy {
  private crashes: number[] = [];
  private failedStarts = 0;

  constructor(private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {}

  /** The sidecar answered `initialize`: failures to start are no longer in a row. */
  onStarted(): void {
    this.failedStarts = 0;
  }

  /** Record a crash at `now` (ms) — during start-up or after — and decide. */
  onCrash(now: number, duringStart: boolean = false): RestartDecision {
    this.crashes = this.crashes.filter((at) => now - at < this.options.windowMs);
    this.crashes.push(now);
    const attempt = this.crashes.length;
    if (duringStart && ++this.failedStarts > this.options.maxStartRetries) {
      const times = this.failedStarts === 2 ? 'twice' : `${this.failedStarts} times`;
      return { restart: false, why: `it failed to start ${times} in a row` };
    }
    if (attempt > this.options.maxRestarts) {
      const minutes = Math.round(this.options.windowMs / 60_000);
      return { restart: false, why: `it stopped ${attempt} times within ${minutes} min` };
    }
    const delayMs = Math.min(this.options.baseDelayMs * 2 ** (attempt - 1), this.options.maxDelayMs);
    return { restart: true, attempt, maxAttempts: this.options.maxRestarts, delayMs };
  }

  /** Forget past crashes: the person asked for a restart, or changed the configuration. */
  reset(): void {
    this.crashes = [];
    this.failedStarts = 0;
  }
}
