/**
 * When to restart a sidecar that died: at most `maxRestarts` crashes within a sliding `windowMs`, each restart
 * waiting twice as long as the one before (from `baseDelayMs` up to `maxDelayMs`). A sidecar that crashes more
 * often than that is broken, not unlucky: restarting it again would only hide the problem, so we stop and say so.
 */

export interface RestartPolicyOptions {
  maxRestarts: number;
  windowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  maxRestarts: 5,
  windowMs: 3 * 60_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
};

export type RestartDecision =
  | { restart: true; attempt: number; maxAttempts: number; delayMs: number }
  | { restart: false; crashes: number; windowMs: number };

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {}

  /** Record a crash at `now` (ms) and decide. */
  onCrash(now: number): RestartDecision {
    this.crashes = this.crashes.filter((at) => now - at < this.options.windowMs);
    this.crashes.push(now);
    const attempt = this.crashes.length;
    if (attempt > this.options.maxRestarts) {
      return { restart: false, crashes: attempt, windowMs: this.options.windowMs };
    }
    const delayMs = Math.min(this.options.baseDelayMs * 2 ** (attempt - 1), this.options.maxDelayMs);
    return { restart: true, attempt, maxAttempts: this.options.maxRestarts, delayMs };
  }

  /** Forget past crashes: the person asked for a restart, or changed the configuration. */
  reset(): void {
    this.crashes = [];
  }
}
