/**
 * The parts of the `vscode` module that vscodeApi.ts uses in the tested paths, with the same behaviour in
 * miniature. vitest maps `import * as vscode from 'vscode'` here (vitest.config.mjs).
 */

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly authority: string = '',
  ) {}

  static from(components: { scheme: string; path: string; authority?: string }): Uri {
    return new Uri(components.scheme, components.path, components.authority);
  }

  static file(path: string): Uri {
    return new Uri('file', path);
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, [base.path.replace(/\/+$/, ''), ...segments].join('/'), base.authority);
  }

  toString(): string {
    return `${this.scheme}:${this.authority ? `//${this.authority}` : ''}${encodeURI(this.path)}`;
  }
}

export class Disposable {
  constructor(private readonly callback: () => void) {}

  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => {
      for (const item of items) item.dispose();
    });
  }

  dispose(): void {
    this.callback();
  }
}

export class EventEmitter<T> {
  private listeners: ((value: T) => void)[] = [];

  readonly event = (listener: (value: T) => void): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((candidate) => candidate !== listener);
    });
  };

  fire(value: T): void {
    for (const listener of this.listeners) listener(value);
  }

  dispose(): void {
    this.listeners = [];
  }
}

export class FileSystemError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }

  static FileNotFound(uri: Uri): FileSystemError {
    return new FileSystemError(`${uri.toString()} not found`, 'FileNotFound');
  }

  static FileExists(uri: Uri): FileSystemError {
    return new FileSystemError(`${uri.toString()} exists`, 'FileExists');
  }

  static FileIsADirectory(uri: Uri): FileSystemError {
    return new FileSystemError(`${uri.toString()} is a directory`, 'FileIsADirectory');
  }

  static FileNotADirectory(uri: Uri): FileSystemError {
    return new FileSystemError(`${uri.toString()} is not a directory`, 'FileNotADirectory');
  }

  static NoPermissions(message: string): FileSystemError {
    return new FileSystemError(message, 'NoPermissions');
  }
}

export enum FileType {
  File = 1,
  Directory = 2,
}

export enum FileChangeType {
  Changed = 1,
  Created = 2,
  Deleted = 3,
}

export enum FilePermission {
  Readonly = 1,
}

export const registered: { scheme: string; provider: unknown; options: unknown }[] = [];

export const workspace = {
  registerFileSystemProvider(scheme: string, provider: unknown, options: unknown): Disposable {
    registered.push({ scheme, provider, options });
    return new Disposable(() => undefined);
  },
};

export class TabInputText {}
export class TabInputTextDiff {}

// -- the Python extension, as vscode.extensions shows it (tests install, activate and remove it) -------------------

export interface MockExtension {
  isActive: boolean;
  exports: unknown;
  activate(): Promise<unknown>;
}

const installedExtensions = new Map<string, MockExtension>();
const extensionChanges = new EventEmitter<void>();

export const extensions = {
  getExtension(id: string): MockExtension | undefined {
    return installedExtensions.get(id);
  },
  onDidChange: extensionChanges.event,
  /** Test helper: install (or, with undefined, remove) an extension, and tell the listeners. */
  install(id: string, extension: MockExtension | undefined): void {
    if (extension) installedExtensions.set(id, extension);
    else installedExtensions.delete(id);
    extensionChanges.fire();
  },
};

// -- quick picks and input boxes (tests answer them) ----------------------------------------------------------------

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

export enum InputBoxValidationSeverity {
  Info = 1,
  Warning = 2,
  Error = 3,
}

export const window = {
  /** What the next quick pick answers: an index into the items it gets, or undefined for Escape. */
  pickIndex: undefined as number | undefined,
  lastPick: undefined as unknown[] | undefined,
  async showQuickPick(items: unknown[]): Promise<unknown> {
    window.lastPick = items;
    return window.pickIndex === undefined ? undefined : items[window.pickIndex];
  },
  lastInputBox: undefined as MockInputBox | undefined,
  createInputBox(): MockInputBox {
    window.lastInputBox = new MockInputBox();
    return window.lastInputBox;
  },
};

/** vscode.InputBox in miniature: the test types (`type`), accepts or hides it. */
export class MockInputBox {
  title = '';
  prompt = '';
  placeholder: string | undefined;
  password = false;
  value = '';
  ignoreFocusOut = false;
  validationMessage: unknown;
  shown = false;
  disposed = false;
  private readonly changes = new EventEmitter<string>();
  private readonly accepts = new EventEmitter<void>();
  private readonly hides = new EventEmitter<void>();
  readonly onDidChangeValue = this.changes.event;
  readonly onDidAccept = this.accepts.event;
  readonly onDidHide = this.hides.event;

  show(): void {
    this.shown = true;
  }

  hide(): void {
    this.hides.fire();
  }

  dispose(): void {
    this.disposed = true;
  }

  type(value: string): void {
    this.value = value;
    this.changes.fire(value);
  }

  accept(): void {
    this.accepts.fire();
  }
}
