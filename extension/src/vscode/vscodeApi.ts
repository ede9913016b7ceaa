/**
 * The small adapters over the `vscode` API. Only the modules of this folder load `vscode` at run time (and
 * extension.ts, which wires them in); everything else gets these adapters through the interfaces in host.ts, so its
 * logic runs in the unit tests without an editor (test/editorBoundary.test.ts holds the rule).
 */

import * as vscode from 'vscode';

import type { TreeNodeSpec } from '../mcp/mcpView';
import type { DiffEditorHost, Disposable, MessageLevel, Notifier, QuickPickItem, ResourceRef, SecretStore } from '../host';
import type { ProposalStore } from '../review/proposals';
import { ORIGINAL_SCHEME, PROPOSED_SCHEME, StoreError, storePathOf, uriPartsOf } from '../review/proposals';
import { openFromDisk } from './workbenchOpen';

export type { Disposable };

const REVIEW_SCHEMES = new Set([PROPOSED_SCHEME, ORIGINAL_SCHEME]);

export function uriOf(resource: ResourceRef): vscode.Uri {
  if (REVIEW_SCHEMES.has(resource.scheme)) return vscode.Uri.from({ scheme: resource.scheme, ...uriPartsOf(resource.path) });
  return vscode.Uri.from({ scheme: resource.scheme, path: resource.path });
}

/** The resource a URI names (a review file's store path from its authority and path). */
function refOf(uri: vscode.Uri): ResourceRef {
  return { scheme: uri.scheme, path: REVIEW_SCHEMES.has(uri.scheme) ? storePathOf(uri) : uri.path };
}

// -- notifications and prompts ------------------------------------------------------------------------------------

export const notifier: Notifier = {
  async show(level: MessageLevel, message: string, ...actions: string[]) {
    switch (level) {
      case 'info':
        return vscode.window.showInformationMessage(message, ...actions);
      case 'warning':
        return vscode.window.showWarningMessage(message, ...actions);
      case 'error':
        return vscode.window.showErrorMessage(message, ...actions);
    }
  },
  async confirm(message, detail, action) {
    const picked = await vscode.window.showWarningMessage(message, { modal: true, detail }, action);
    return picked === action;
  },
  async pick<T extends QuickPickItem>(items: T[], options: { title: string; placeholder?: string }) {
    const shown = items.map((item) => (item.separator ? { ...item, kind: vscode.QuickPickItemKind.Separator } : item));
    const picked = await vscode.window.showQuickPick(shown, { title: options.title, placeHolder: options.placeholder });
    return picked === undefined ? undefined : items[shown.indexOf(picked)];
  },
  input(options) {
    // createInputBox rather than showInputBox: only it shows a message for the text it opens with, and the reason
    // the last attempt failed belongs under that text (until the person changes it).
    const box = vscode.window.createInputBox();
    box.title = options.title;
    box.prompt = options.prompt;
    box.placeholder = options.placeholder;
    box.password = options.password ?? false;
    box.value = options.value ?? '';
    box.ignoreFocusOut = true;
    const refusal = options.error
      ? { message: options.error, severity: vscode.InputBoxValidationSeverity.Warning }
      : undefined;
    box.validationMessage = refusal;
    return new Promise<string | undefined>((resolve) => {
      let answered = false;
      const subscriptions = [
        box.onDidChangeValue((text) => {
          box.validationMessage = text === options.value ? refusal : undefined;
        }),
        box.onDidAccept(() => {
          answered = true;
          resolve(box.value);
          box.hide();
        }),
        box.onDidHide(() => {
          if (!answered) resolve(undefined);
          for (const subscription of subscriptions) subscription.dispose();
          box.dispose();
        }),
      ];
      box.show();
    });
  },
};

// -- diff editors ---------------------------------------------------------------------------------------------------

export const diffEditor: DiffEditorHost = {
  async openDiff(left, right, title, focus) {
    // A review that opens by itself must not pull the cursor out of whatever the person is typing in; one the
    // person asked to see takes it (the review's keybindings work there).
    await vscode.commands.executeCommand('vscode.diff', uriOf(left), uriOf(right), title, {
      preview: false,
      preserveFocus: !focus,
    });
  },
  documentText(resource) {
    const target = uriOf(resource).toString();
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === target)?.getText();
  },
  async saveDocument(resource) {
    const target = uriOf(resource).toString();
    const document = vscode.workspace.textDocuments.find((candidate) => candidate.uri.toString() === target);
    // Not only when `isDirty`: this host learns of the latest keystrokes late, the editor knows; a clean document's
    // save writes nothing.
    if (document) await document.save();
  },
  async closeTabs(resources) {
    const targets = new Set(resources.map((resource) => uriOf(resource).toString()));
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff) {
          return targets.has(input.original.toString()) || targets.has(input.modified.toString());
        }
        return input instanceof vscode.TabInputText && targets.has(input.uri.toString());
      });
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  },
};

// -- in-memory file systems for reviews -----------------------------------------------------------------------------

function asFileSystemError(error: unknown, uri: vscode.Uri): Error {
  if (!(error instanceof StoreError)) return error instanceof Error ? error : new Error(String(error));
  switch (error.code) {
    case 'FileNotFound':
      return vscode.FileSystemError.FileNotFound(uri);
    case 'FileExists':
      return vscode.FileSystemError.FileExists(uri);
    case 'FileIsADirectory':
      return vscode.FileSystemError.FileIsADirectory(uri);
    case 'FileNotADirectory':
      return vscode.FileSystemError.FileNotADirectory(uri);
    case 'NoPermissions':
      return vscode.FileSystemError.NoPermissions(error.message);
  }
}

function guard<T>(uri: vscode.Uri, action: () => T): T {
  try {
    return action();
  } catch (error) {
    throw asFileSystemError(error, uri);
  }
}

export function registerProposalFileSystem(store: ProposalStore): vscode.Disposable {
  const changes = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  const subscription = store.onDidChange((events) =>
    changes.fire(
      events.map((event) => ({
        uri: uriOf({ scheme: store.scheme, path: event.path }),
        type:
          event.type === 'created'
            ? vscode.FileChangeType.Created
            : event.type === 'deleted'
              ? vscode.FileChangeType.Deleted
              : vscode.FileChangeType.Changed,
      })),
    ),
  );
  const provider: vscode.FileSystemProvider = {
    onDidChangeFile: changes.event,
    watch: () => new vscode.Disposable(() => undefined),
    stat: (uri) =>
      guard(uri, () => {
        const stat = store.stat(storePathOf(uri));
        return {
          type: stat.type === 'file' ? vscode.FileType.File : vscode.FileType.Directory,
          size: stat.size,
          ctime: stat.ctime,
          mtime: stat.mtime,
          permissions: store.readonly ? vscode.FilePermission.Readonly : undefined,
        };
      }),
    readDirectory: (uri) =>
      guard(uri, () =>
        store
          .readDirectory(storePathOf(uri))
          .map(([name, type]): [string, vscode.FileType] => [
            name,
            type === 'file' ? vscode.FileType.File : vscode.FileType.Directory,
          ]),
      ),
    createDirectory: (uri) => guard(uri, () => store.assertWritable(storePathOf(uri))),
    readFile: (uri) => guard(uri, () => store.readFile(storePathOf(uri))),
    writeFile: (uri, content, options) => guard(uri, () => store.writeFile(storePathOf(uri), content, options)),
    delete: (uri) =>
      guard(uri, () => {
        throw new StoreError('NoPermissions', `${uri.toString()} is part of a toolgate review and cannot be deleted`);
      }),
    rename: (uri) =>
      guard(uri, () => {
        throw new StoreError('NoPermissions', `${uri.toString()} is part of a toolgate review and cannot be renamed`);
      }),
  };
  const registration = vscode.workspace.registerFileSystemProvider(store.scheme, provider, {
    isCaseSensitive: true,
    isReadonly: store.readonly,
  });
  return vscode.Disposable.from(registration, changes, { dispose: () => subscription.dispose() });
}

// -- settings, secrets, environment --------------------------------------------------------------------------------

export function readToolgateSetting(key: string): unknown {
  return vscode.workspace.getConfiguration('toolgate').get(key);
}

export function onToolgateSettingsChanged(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((event) => {
    if (event.affectsConfiguration('toolgate')) listener();
  });
}

export function secretStore(context: vscode.ExtensionContext): SecretStore {
  return {
    get: async (key) => context.secrets.get(key),
    store: async (key, value) => context.secrets.store(key, value),
    delete: async (key) => context.secrets.delete(key),
  };
}

export function onSecretsChanged(context: vscode.ExtensionContext, listener: (key: string) => void): vscode.Disposable {
  return context.secrets.onDidChange((event) => listener(event.key));
}

export function firstWorkspaceFolder(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.find((candidate) => candidate.uri.scheme === 'file');
  return folder?.uri.fsPath;
}

/** The interpreter selected in the Python extension (ms-python.python), if it is installed and has one. */
export async function pythonExtensionInterpreter(resource: string | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) return undefined;
  type Environments = {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(path: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  type PythonApi = {
    environments?: Environments;
    settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined };
  };
  const activation = extension.isActive ? Promise.resolve(extension.exports) : extension.activate();
  // The Python extension can take long to activate; do not let it hold up toolgate forever.
  const api = (await Promise.race([activation, delay(15_000)])) as PythonApi | undefined;
  if (!api) return undefined;
  const uri = resource ? vscode.Uri.file(resource) : undefined;
  const active = api.environments?.getActiveEnvironmentPath?.(uri);
  if (active) {
    const resolved = await api.environments?.resolveEnvironment?.(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  }
  return api.settings?.getExecutionDetails?.(uri)?.execCommand?.[0];
}

/**
 * Calls `listener` with the new interpreter's path whenever the Python extension's active interpreter changes. The
 * Python extension may be installed (or activated) after toolgate; it is looked for again whenever extensions change.
 */
export function onPythonInterpreterChanged(listener: (interpreter: string) => void): vscode.Disposable {
  type Event<T> = (listener: (event: T) => unknown) => vscode.Disposable;
  type PythonApi = {
    environments?: { onDidChangeActiveEnvironmentPath?: Event<{ path?: string } | undefined> };
    settings?: { onDidChangeExecutionDetails?: Event<unknown> };
  };
  const subscriptions: vscode.Disposable[] = [];
  let subscribed = false;
  let disposed = false;
  const subscribe = (api: PythonApi | undefined): void => {
    if (disposed || subscribed || !api) return;
    const environments = api.environments?.onDidChangeActiveEnvironmentPath;
    if (environments) {
      subscribed = true;
      subscriptions.push(environments.call(api.environments, (event) => listener(event?.path ?? '')));
      return;
    }
    // Older Python extensions only say that the execution details changed, not to what.
    const details = api.settings?.onDidChangeExecutionDetails;
    if (details) {
      subscribed = true;
      subscriptions.push(details.call(api.settings, () => listener('')));
    }
  };
  const look = (): void => {
    const extension = vscode.extensions.getExtension('ms-python.python');
    if (!extension || subscribed) return;
    const activation = extension.isActive ? Promise.resolve(extension.exports) : extension.activate();
    activation.then(
      (api) => subscribe(api as PythonApi | undefined),
      () => undefined, // a Python extension that fails to activate offers nothing to follow
    );
  };
  look();
  subscriptions.push(vscode.extensions.onDidChange(look));
  return new vscode.Disposable(() => {
    disposed = true;
    for (const subscription of subscriptions.splice(0)) subscription.dispose();
  });
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

// -- commands, views, documents -------------------------------------------------------------------------------------

export function registerCommand(id: string, handler: (...args: unknown[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, handler);
}

/** A code block's Copy button: the editor's clipboard (the webview's own may be refused). */
export async function copyText(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
}

export function executeCommand(id: string, ...args: unknown[]): Thenable<unknown> {
  return vscode.commands.executeCommand(id, ...args);
}

export function registerChatView(viewId: string, provider: vscode.WebviewViewProvider): vscode.Disposable {
  return vscode.window.registerWebviewViewProvider(viewId, provider);
}

export function joinPath(base: vscode.Uri, ...segments: string[]): vscode.Uri {
  return vscode.Uri.joinPath(base, ...segments);
}

/** The resource of the active editor (the modified side, for a diff). */
export function activeEditorResource(): ResourceRef | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  return uri ? refOf(uri) : undefined;
}

export function resourceOf(value: unknown): ResourceRef | undefined {
  return value instanceof vscode.Uri ? refOf(value) : undefined;
}

/**
 * Open a file in an editor, with the cursor at `at` (1-based line and column) when given; a missing file opens as an
 * unsaved document with `initialText`, so nothing is written.
 */
export async function openFileOrDraft(
  fsPath: string,
  exists: boolean,
  initialText: string,
  at?: { line: number; column: number },
): Promise<void> {
  if (exists) {
    const line = Math.max(at?.line ?? 1, 1);
    const column = Math.max(at?.column ?? 1, 1);
    try {
      // Its text as it is on disk now, the cursor then put at the place (see workbenchOpen.ts).
      const selection = at ? { startLineNumber: line, startColumn: column } : undefined;
      await openFromDisk(vscode.Uri.file(fsPath), { pinned: true, ...(selection ? { selection } : {}) });
      return;
    } catch {
      // A VS Code without the internal command: the public way, which shows the text the editor holds.
    }
    const position = at ? new vscode.Position(line - 1, column - 1) : undefined;
    await vscode.window.showTextDocument(vscode.Uri.file(fsPath), {
      preview: false,
      selection: position ? new vscode.Range(position, position) : undefined,
    });
    return;
  }
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(fsPath).with({ scheme: 'untitled' }));
  const editor = await vscode.window.showTextDocument(document, { preview: false });
  if (document.getText() === '') {
    await editor.edit((edit) => edit.insert(new vscode.Position(0, 0), initialText));
  }
}

/** A progress notification that stays until `done()`; `report` replaces its message. */
export function progressNotification(title: string): { report(step: string): void; done(): void } {
  let finish: () => void = () => {};
  let report: (step: string) => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, (progress) => {
    report = (step) => progress.report({ message: step });
    return finished;
  });
  return { report: (step) => report(step), done: () => finish() };
}

export function runInTerminal(name: string, commandLine: string): void {
  const terminal = vscode.window.createTerminal({ name });
  terminal.show();
  terminal.sendText(commandLine, true);
}

export async function copyToClipboard(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
}

// -- tree views -------------------------------------------------------------------------------------------------------

/** A tree's content, as plain nodes; `spec` says how each looks (mcpView.ts has one). */
export interface TreeSource<T> {
  roots(): T[];
  children(node: T): T[];
  spec(node: T): TreeNodeSpec;
  onDidChange(listener: () => void): Disposable;
}

/** Show `source` in the view `viewId`; `onVisible` runs whenever the view comes into sight. */
export function registerTreeView<T>(viewId: string, source: TreeSource<T>, onVisible: () => void): vscode.Disposable {
  const changes = new vscode.EventEmitter<void>();
  const subscription = source.onDidChange(() => changes.fire());
  const provider: vscode.TreeDataProvider<T> = {
    onDidChangeTreeData: changes.event,
    getChildren: (node) => (node === undefined ? source.roots() : source.children(node)),
    getTreeItem: (node) => {
      const spec = source.spec(node);
      const state = !spec.collapsible
        ? vscode.TreeItemCollapsibleState.None
        : spec.expanded
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
      const item = new vscode.TreeItem(spec.label, state);
      item.id = spec.id;
      item.description = spec.description;
      item.tooltip = spec.tooltip;
      item.contextValue = spec.contextValue;
      if (spec.icon) item.iconPath = new vscode.ThemeIcon(spec.icon);
      return item;
    },
  };
  const view = vscode.window.createTreeView(viewId, { treeDataProvider: provider, showCollapseAll: false });
  const visibility = view.onDidChangeVisibility((event) => {
    if (event.visible) onVisible();
  });
  if (view.visible) onVisible();
  return vscode.Disposable.from(view, visibility, changes, { dispose: () => subscription.dispose() });
}

/**
 * A document the person saves where they choose (a session's export): the save dialog, starting in the first
 * workspace folder with `fileName`, then the file written. The path it was saved to; undefined when cancelled.
 */
export async function saveDocument(fileName: string, content: string, kind: 'markdown' | 'json'): Promise<string | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: 'Export the session',
    saveLabel: 'Export',
    ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, fileName) } : {}),
    filters: kind === 'json' ? { JSON: ['json'] } : { Markdown: ['md'] },
  });
  if (!target) return undefined;
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(content));
  return target.scheme === 'file' ? target.fsPath : target.toString();
}

/** A read-only text (a log) in an editor tab, without a file. */
export async function openReadOnlyText(_title: string, text: string): Promise<void> {
  const document = await vscode.workspace.openTextDocument({ content: text, language: 'log' });
  await vscode.window.showTextDocument(document, { preview: true });
}
