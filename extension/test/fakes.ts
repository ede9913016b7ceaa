/** Stand-ins for the editor in unit tests: each records what was asked and answers as the test says. */

import type { RuleSaver } from '../src/review/approvals';
import type { ChatPresence } from '../src/chat/chatStore';
import { ChatStore } from '../src/chat/chatStore';
import { Emitter } from '../src/host';
import type {
  CancellationLike,
  DiffEditorHost,
  Disposable,
  MessageLevel,
  Notifier,
  QuickPickItem,
  ResourceRef,
  Timers,
} from '../src/host';
import type { ApprovalRequestParams, McpServerInfo, PendingCall, RuleScope } from '../src/protocol';
import { initialState } from '../src/shared/chatModel';
import { SidecarError } from '../src/sidecar/sidecarClient';

/** A `toolgate/approval/request` as the sidecar sends it, with what a test is about changed: one place to extend. */
export function approvalRequest(overrides: Partial<ApprovalRequestParams> = {}): ApprovalRequestParams {
  return { sessionId: 's1', toolUseId: 't1', toolName: 'Bash', input: {}, summary: 'ls', reason: 'r', suggestions: [], offersAcceptEdits: false, subagent: null, ...overrides };
}

export function newStore(): ChatStore {
  return new ChatStore(initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: false, message: '' }, 'default'));
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}

/** Wait until queued promise callbacks have run (no timers involved). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

export class FakeNotifier implements Notifier {
  readonly shown: { level: MessageLevel; message: string; actions: string[]; answer: Deferred<string | undefined> }[] = [];
  readonly picks: { title: string; labels: string[] }[] = [];
  readonly inputs: string[] = [];
  /** What each input box was opened with. */
  readonly inputOptions: { title: string; value?: string; error?: string }[] = [];
  /** How pickers answer: the label to pick, or undefined for Escape. */
  pickAnswers: (string | undefined)[] = [];
  inputAnswers: (string | undefined)[] = [];
  confirmAnswer = true;

  show(level: MessageLevel, message: string, ...actions: string[]): Promise<string | undefined> {
    const answer = deferred<string | undefined>();
    this.shown.push({ level, message, actions, answer });
    return answer.promise;
  }

  async confirm(): Promise<boolean> {
    return this.confirmAnswer;
  }

  async pick<T extends QuickPickItem>(items: T[], options: { title: string }): Promise<T | undefined> {
    this.picks.push({ title: options.title, labels: items.map((item) => item.label) });
    const label = this.pickAnswers.shift();
    return items.find((item) => item.label === label);
  }

  async input(options: { title: string; value?: string; error?: string }): Promise<string | undefined> {
    this.inputs.push(options.title);
    this.inputOptions.push({ title: options.title, value: options.value, error: options.error });
    return this.inputAnswers.shift();
  }

  /** Click an action on the most recent notification (or dismiss it with undefined). */
  click(action: string | undefined, index = this.shown.length - 1): void {
    const entry = this.shown[index];
    if (!entry) throw new Error('no notification was shown');
    entry.answer.resolve(action);
  }
}

export class FakePresence implements ChatPresence {
  visible: boolean;
  badge = { count: 0, tooltip: '' };
  private readonly emitter = new Emitter<boolean>();

  constructor(visible: boolean) {
    this.visible = visible;
  }

  isVisible(): boolean {
    return this.visible;
  }

  onDidChangeVisibility(listener: (visible: boolean) => void): Disposable {
    return this.emitter.event(listener);
  }

  setBadge(count: number, tooltip: string): void {
    this.badge = { count, tooltip };
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    this.emitter.fire(visible);
  }
}

const key = (resource: ResourceRef): string => `${resource.scheme}:${resource.path}`;

export class FakeEditor implements DiffEditorHost {
  readonly opened: { left: string; right: string; title: string; focus: boolean }[] = [];
  readonly saved: string[] = [];
  readonly closed: string[][] = [];
  /** Open documents: URI → text (with any unsaved edits). */
  readonly documents = new Map<string, string>();
  onSave: (resource: ResourceRef, text: string) => void = () => undefined;

  async openDiff(left: ResourceRef, right: ResourceRef, title: string, focus: boolean): Promise<void> {
    this.opened.push({ left: key(left), right: key(right), title, focus });
  }

  documentText(resource: ResourceRef): string | undefined {
    return this.documents.get(key(resource));
  }

  async saveDocument(resource: ResourceRef): Promise<void> {
    // A save makes the editor send what it has (keystrokes this host had not heard of yet), then write it.
    const late = this.unsynced.get(key(resource));
    if (late !== undefined) {
      this.documents.set(key(resource), late);
      this.unsynced.delete(key(resource));
    }
    const text = this.documents.get(key(resource));
    if (text === undefined) return;
    this.saved.push(key(resource));
    this.onSave(resource, text);
  }

  async closeTabs(resources: readonly ResourceRef[]): Promise<void> {
    this.closed.push(resources.map(key));
    for (const resource of resources) this.documents.delete(key(resource));
  }

  /** The person edits a proposal in the diff editor (without saving). */
  edit(uri: string, text: string): void {
    this.documents.set(uri, text);
  }

  /** Keystrokes the editor has and this host has not received yet: `documentText` still gives the old text. */
  readonly unsynced = new Map<string, string>();

  typeUnsynced(uri: string, text: string): void {
    if (!this.documents.has(uri)) this.documents.set(uri, '');
    this.unsynced.set(uri, text);
  }
}

export class FakeTimers implements Timers {
  private time = 1_000_000;
  private scheduled: { at: number; callback: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): Disposable {
    const entry = { at: this.time + ms, callback, cancelled: false };
    this.scheduled.push(entry);
    return { dispose: () => (entry.cancelled = true) };
  }

  get pending(): number[] {
    return this.scheduled.filter((entry) => !entry.cancelled).map((entry) => entry.at - this.time);
  }

  /** Move the clock forward, running what falls due, in order. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.scheduled
        .filter((entry) => !entry.cancelled && entry.at <= until)
        .sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.cancelled = true;
      this.time = due.at;
      due.callback();
    }
    this.time = until;
  }
}

export class FakeCancellation implements CancellationLike {
  isCancellationRequested = false;
  private readonly emitter = new Emitter<void>();

  onCancellationRequested(listener: (event: unknown) => unknown): Disposable {
    return this.emitter.event(() => listener(undefined));
  }

  cancel(): void {
    this.isCancellationRequested = true;
    this.emitter.fire();
  }
}

/** The sidecar's rule methods, for approvals: records what was saved, refuses what the test says. */
export class FakeRules implements RuleSaver {
  readonly added: { sessionId: string; rule: string; scope: RuleScope; call: PendingCall }[] = [];
  /** Reasons for refusing the next addRule calls, in order (one per call). */
  refusals: string[] = [];
  warnings: string[] = [];
  /** What addRule answers about the waiting call: whether the saved rule covers it. */
  covers: boolean | null = true;
  /** When set, addRule waits for it (to test what happens meanwhile). */
  gate: Deferred<void> | undefined;
  /** What the check before saving answers: null covers every rule; a string is why the rule would not cover. */
  wouldNotCover: string | null = null;
  readonly checked: string[] = [];

  async wouldCover(_sessionId: string, rule: string): Promise<{ covers: boolean; reason: string }> {
    this.checked.push(rule);
    return this.wouldNotCover === null ? { covers: true, reason: 'allowed' } : { covers: false, reason: this.wouldNotCover };
  }

  /** Calls the mode was switched to acceptEdits for; `modeRefusal` makes the next switch fail. */
  readonly acceptedEdits: { sessionId: string; toolUseId: string }[] = [];
  modeRefusal: string | undefined;

  readonly acceptEdits = async (sessionId: string, toolUseId: string): Promise<void> => {
    const refusal = this.modeRefusal;
    this.modeRefusal = undefined;
    if (refusal) throw new SidecarError('toolgate/settings/setMode', `toolgate/settings/setMode failed: ${refusal}`, -32602, refusal);
    this.acceptedEdits.push({ sessionId, toolUseId });
  };

  async addRule(sessionId: string, rule: string, scope: RuleScope, call: PendingCall): Promise<{ warnings: string[]; coversCall: boolean | null }> {
    if (this.gate) await this.gate.promise;
    const refusal = this.refusals.shift();
    if (refusal) throw new SidecarError('toolgate/settings/addRule', `toolgate/settings/addRule failed: ${refusal}`, -32602, refusal);
    this.added.push({ sessionId, rule, scope, call });
    return { warnings: this.warnings, coversCall: this.covers };
  }
}

/** An MCP server as `toolgate/mcp/servers` lists it: a workspace server waiting for its first approval. */
export function mcpServer(overrides: Partial<McpServerInfo> = {}): McpServerInfo {
  return {
    name: 'docs',
    scope: 'workspace',
    source: '/ws/.mcp.json',
    transport: 'stdio',
    command: 'python docs_server.py',
    state: 'needs-approval',
    reason: 'it has not been approved with its current settings',
    approved: false,
    pinned: false,
    changed: false,
    changedTools: [],
    diff: '',
    tools: [],
    log: '/data/mcp/logs/docs.log',
    ...overrides,
  };
}
