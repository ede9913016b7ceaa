/**
 * The sidecar's lifecycle: pick and check a Python, start `python -m toolgate serve`, restart it (boundedly) when
 * it dies, stop it cleanly. Every state change is published, so the chat can show an outage and its recovery.
 *
 * Each start gets a generation number; anything that arrives from an older generation (a late "closed" from a
 * process we already replaced) is ignored, so one crash is handled exactly once.
 */

import { Emitter } from '../host';
import type { Disposable, Timers } from '../host';
import type { PythonCheck, PythonFailure, PythonOk } from '../python/python';
import type { RestartPolicy } from './restartPolicy';
import { errorMessage } from './rpc';
import type {
  ConnectionFactory,
  NotificationHandler,
  RequestHandler,
  ServerInfo,
  SidecarConnection,
  SidecarLaunch,
} from './rpc';

export type SidecarState =
  | { kind: 'stopped' }
  | { kind: 'starting'; attempt: number; step?: string }
  | { kind: 'running'; python: PythonOk; server: ServerInfo; recovered: boolean }
  | { kind: 'restarting'; attempt: number; maxAttempts: number; delayMs: number; reason: string }
  | { kind: 'failed'; reason: string; detail: string }
  | { kind: 'unavailable'; python: PythonFailure };

export interface SidecarDeps {
  /** Choose and probe the Python (python.ts), building toolgate's environment if needed; `progress` gets each step. */
  checkPython(progress: (step: string) => void): Promise<PythonCheck>;
  /** Build the command line, environment and initialization options for a checked Python. */
  launch(python: PythonOk): Promise<SidecarLaunch>;
  createConnection: ConnectionFactory;
  policy: RestartPolicy;
  timers: Timers;
  /** The last lines the sidecar wrote to stderr, to say why it died. */
  recentOutput(): string;
  log(line: string): void;
}

/** How long a stopping sidecar gets to exit on its own before it is killed. */
export const STOP_TIMEOUT_MS = 3000;

export class SidecarManager implements Disposable {
  private stateValue: SidecarState = { kind: 'stopped' };
  private generation = 0;
  private connectionValue: SidecarConnection | undefined;
  private closedGeneration = -1;
  private runningGeneration = -1;
  private restartTimer: Disposable | undefined;
  private restartAttempt = 0;
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly stateEmitter = new Emitter<SidecarState>();

  /** Fires after every state change. */
  readonly onDidChangeState = this.stateEmitter.event;

  constructor(private readonly deps: SidecarDeps) {}

  get state(): SidecarState {
    return this.stateValue;
  }

  /** The live connection, only while the sidecar is running. */
  get connection(): SidecarConnection | undefined {
    return this.stateValue.kind === 'running' ? this.connectionValue : undefined;
  }

  /** Handlers for server → client messages; they apply to the current and every later sidecar process. */
  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.notificationHandlers.set(method, handler);
  }

  /** Start unless already starting or running. */
  async start(): Promise<void> {
    const kind = this.stateValue.kind;
    if (kind === 'starting' || kind === 'running' || kind === 'restarting') return;
    this.restartAttempt = 0;
    await this.begin();
  }

  /** Stop whatever runs and start afresh, forgetting earlier crashes: the person asked for it. */
  async restart(): Promise<void> {
    await this.stop();
    this.deps.policy.reset();
    this.restartAttempt = 0;
    await this.begin();
  }

  /** Stop the sidecar (and any pending restart). Resolves once the process is gone or has been killed. */
  async stop(): Promise<void> {
    this.generation++;
    this.restartTimer?.dispose();
    this.restartTimer = undefined;
    const connection = this.connectionValue;
    this.connectionValue = undefined;
    this.setState({ kind: 'stopped' });
    if (connection) await this.stopConnection(connection);
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }

  private async begin(): Promise<void> {
    const generation = ++this.generation;
    const recovering = this.restartAttempt > 0;
    this.setState({ kind: 'starting', attempt: this.restartAttempt });
    let python: PythonCheck;
    try {
      python = await this.deps.checkPython((step) => {
        if (generation === this.generation) this.setState({ kind: 'starting', attempt: this.restartAttempt, step });
      });
    } catch (error) {
      if (generation !== this.generation) return;
      this.setState({ kind: 'failed', reason: `checking the Python failed: ${errorMessage(error)}`, detail: '' });
      return;
    }
    if (generation !== this.generation) return;
    if (!python.ok) {
      this.deps.log(`${python.message} ${python.fix}`);
      this.setState({ kind: 'unavailable', python });
      return;
    }
    let connection: SidecarConnection;
    try {
      const launch = await this.deps.launch(python);
      if (generation !== this.generation) return;
      this.deps.log(`starting the sidecar: ${launch.command} ${launch.args.join(' ')}`);
      connection = this.deps.createConnection(launch, {
        onClosed: (reason) => this.closed(generation, reason),
        requestHandlers: this.requestHandlers,
        notificationHandlers: this.notificationHandlers,
      });
    } catch (error) {
      if (generation !== this.generation) return;
      this.setState({ kind: 'failed', reason: `the sidecar could not be launched: ${errorMessage(error)}`, detail: '' });
      return;
    }
    this.connectionValue = connection;
    try {
      const server = await connection.start();
      if (generation !== this.generation || this.closedGeneration === generation) return;
      this.runningGeneration = generation;
      this.deps.policy.onStarted();
      this.setState({ kind: 'running', python, server, recovered: recovering });
    } catch (error) {
      this.closed(generation, `it did not start: ${errorMessage(error)}`);
    }
  }

  private closed(generation: number, reason: string): void {
    if (generation !== this.generation || this.closedGeneration === generation) return;
    this.closedGeneration = generation;
    const connection = this.connectionValue;
    this.connectionValue = undefined;
    if (connection) void this.stopConnection(connection);
    const detail = this.deps.recentOutput();
    this.deps.log(`the sidecar stopped: ${reason}`);
    const duringStart = this.runningGeneration !== generation;
    const decision = this.deps.policy.onCrash(this.deps.timers.now(), duringStart);
    if (!decision.restart) {
      this.setState({ kind: 'failed', reason: `${decision.why} (${reason}), so it was not restarted again`, detail });
      return;
    }
    this.restartAttempt = decision.attempt;
    this.setState({
      kind: 'restarting',
      attempt: decision.attempt,
      maxAttempts: decision.maxAttempts,
      delayMs: decision.delayMs,
      reason: detail ? `${reason}: ${lastLine(detail)}` : reason,
    });
    this.restartTimer = this.deps.timers.setTimeout(() => {
      this.restartTimer = undefined;
      if (generation === this.generation) void this.begin();
    }, decision.delayMs);
  }

  private async stopConnection(connection: SidecarConnection): Promise<void> {
    try {
      await connection.stop(STOP_TIMEOUT_MS);
    } catch (error) {
      // A process that is already gone cannot be stopped; that is the outcome we wanted.
      this.deps.log(`stopping the sidecar: ${errorMessage(error)}`);
    }
  }

  private setState(state: SidecarState): void {
    this.stateValue = state;
    this.stateEmitter.fire(state);
  }
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  return (lines[lines.length - 1] ?? '').trim();
}
