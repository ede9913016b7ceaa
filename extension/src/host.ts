/**
 * What the extension's logic needs from the editor, as small interfaces.
 *
 * `vscode/vscodeApi.ts` implements them with the real `vscode` module; the unit tests implement them with fakes. Only
 * the thin wrapper in `vscode/` (and `extension.ts`, which wires it in) loads `vscode` at run time, so everything
 * else can be tested in plain Node; test/editorBoundary.test.ts holds that rule.
 */

export interface Disposable {
  dispose(): void;
}

export type MessageLevel = 'info' | 'warning' | 'error';

export interface QuickPickItem {
  label: string;
  description?: string;
  detail?: string;
  /** A heading between groups of items; it cannot be picked. */
  separator?: boolean;
}

/** Notifications, pickers and prompts. None of these take focus from the editor except pickers and input boxes. */
export interface Notifier {
  show(level: MessageLevel, message: string, ...actions: string[]): Promise<string | undefined>;
  /** A modal confirmation, for destructive actions the person started themselves. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
  pick<T extends QuickPickItem>(items: T[], options: { title: string; placeholder?: string }): Promise<T | undefined>;
  /** An input box. `error` is shown under `value` (until the value is changed): why the last attempt failed. */
  input(options: {
    title: string;
    prompt: string;
    placeholder?: string;
    password?: boolean;
    value?: string;
    error?: string;
  }): Promise<string | undefined>;
}

/** A document's address: a URI's scheme and path (vscodeApi turns it into a vscode.Uri). */
export interface ResourceRef {
  scheme: string;
  path: string;
}

/** The diff editor and open documents, for reviews. */
export interface DiffEditorHost {
  /** `focus`: the person asked for this diff, so the cursor goes into the proposal; otherwise it stays put. */
  openDiff(left: ResourceRef, right: ResourceRef, title: string, focus: boolean): Promise<void>;
  /** The text of an open document, including unsaved edits; undefined when it is not open. */
  documentText(resource: ResourceRef): string | undefined;
  /** Save an open, modified document (to its own file system provider), so closing it asks nothing. */
  saveDocument(resource: ResourceRef): Promise<void>;
  /** Close every tab whose document (or either side of a diff) is one of these. */
  closeTabs(resources: readonly ResourceRef[]): Promise<void>;
}

export interface SecretStore {
  get(key: string): Promise<string | undefined>;
  store(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface Timers {
  now(): number;
  setTimeout(callback: () => void, ms: number): Disposable;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const handle = setTimeout(callback, ms);
    return { dispose: () => clearTimeout(handle) };
  },
};

/** A minimal event: subscribe, get a disposable back. */
export type Listener<T> = (value: T) => void;

export class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();

  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }

  dispose(): void {
    this.listeners.clear();
  }
}

/**
 * A handler handed to a part before the part that handles its calls exists (the chat view's messages go to the
 * commands, which are built after the view): `connect` once both exist. A call before that is refused, not lost.
 */
export class Relay<T> {
  private target: ((value: T) => Promise<void>) | undefined;

  readonly deliver = async (value: T): Promise<void> => {
    if (!this.target) throw new Error('a message arrived before its handler was connected');
    await this.target(value);
  };

  connect(target: (value: T) => Promise<void>): void {
    this.target = target;
  }
}

/** A cancellation signal, shaped like vscode's CancellationToken and vscode-jsonrpc's. */
export interface CancellationLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: (event: unknown) => unknown): Disposable;
}
