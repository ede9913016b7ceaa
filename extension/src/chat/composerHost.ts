/**
 * The composer's host side: the `@` candidates (files, folders, symbols, problems), attachments from the editor
 * ("Add selection to chat", the active file), the model picker, and the slash commands. What the editor knows comes
 * through `ComposerEditor` (src/vscode/composerVscode.ts); the sidecar reads attached files itself.
 */

import * as path from 'node:path';

import type { Notifier } from '../host';
import type { ChatStore } from './chatStore';
import type { Attachment, CompletionItem, SlashName } from '../shared/composer';
import { SLASH_COMMANDS, attachmentLabel, parseSlash, rankCandidates } from '../shared/composer';
import type { AttachmentChip, HostMessage, ViewMessage } from '../shared/messages';
import type { EditorProblem } from '../protocol.generated';
import type { SidecarClient } from '../sidecar/sidecarClient';
import { failureReason } from '../sidecar/sidecarClient';

export interface EditorSymbol {
  name: string;
  kind: string;
  container: string;
  path: string;
  startLine: number;
  endLine: number;
}

export interface EditorSelection {
  path: string;
  startLine: number;
  endLine: number;
  empty: boolean;
}

/** What the composer asks the editor. */
export interface ComposerEditor {
  workspaceFiles(max: number): Promise<string[]>;
  workspaceSymbols(query: string): Promise<EditorSymbol[]>;
  /** What the editor's language servers report now, in every file (only counted here: the sidecar lists them). */
  problems(): EditorProblem[];
  activeSelection(): EditorSelection | undefined;
  workspaceRoot(): string | undefined;
}

/** A keybinding or command as package.json contributes it (for /help). */
export interface Manifest {
  commands: readonly { command: string; title: string; category?: string }[];
  keybindings: readonly { command: string; key: string; mac?: string }[];
}

export interface ComposerDeps {
  editor: ComposerEditor;
  client: Pick<SidecarClient, 'listModels' | 'selectModel'>;
  store: Pick<ChatStore, 'state' | 'dispatch'>;
  notifier: Pick<Notifier, 'pick'>;
  /** To the chat webview (dropped while it is not showing). */
  post: (message: HostMessage) => void;
  /** The toolgate.models setting: the models the picker offers first. */
  configuredModels: () => string[];
  manifest: Manifest;
  mac: boolean;
  /** What the other slash commands do. */
  commands: Record<Exclude<SlashName, 'model' | 'help'>, (argument: string) => Promise<void>>;
  /** Show the chat and put the keyboard in the composer. */
  showChat: () => Promise<void>;
}

export type ComposerMessage = Extract<ViewMessage, { type: 'complete' | 'attachActiveFile' | 'listModels' | 'selectModel' }>;

export function isComposerMessage(message: ViewMessage): message is ComposerMessage {
  return ['complete', 'attachActiveFile', 'listModels', 'selectModel'].includes(message.type);
}

const MAX_FILES = 5000;
const FILE_LIST_TTL_MS = 5000;
const MAX_SYMBOLS = 20;

export class ComposerHost {
  private files: { at: number; paths: Promise<string[]> } | undefined;

  constructor(private readonly deps: ComposerDeps) {}

  async viewMessage(message: ComposerMessage): Promise<void> {
    switch (message.type) {
      case 'complete':
        return this.complete(message.requestId, message.query);
      case 'attachActiveFile':
        return this.attachActive(false);
      case 'listModels':
        return this.listModels();
      case 'selectModel':
        return this.selectModel(message.model);
    }
  }

  /** A message that is a slash command is run here, not sent (true); any other message is the chat's (false). */
  async slashCommand(text: string): Promise<boolean> {
    const command = parseSlash(text);
    if (!command) return false;
    if (command.name === 'model') {
      if (command.argument) await this.selectModel(command.argument);
      else await this.pickModel();
    } else if (command.name === 'help') {
      this.deps.store.dispatch({ type: 'notice', level: 'info', text: this.helpText() });
    } else {
      await this.deps.commands[command.name](command.argument);
    }
    return true;
  }

  /** "Add selection to chat" (selection: true) and the composer's "attach the active file" button (false). */
  async attachActive(selection: boolean): Promise<void> {
    const active = this.deps.editor.activeSelection();
    if (!active) {
      this.deps.store.dispatch({ type: 'notice', level: 'info', text: 'There is no file open in an editor to attach.' });
      return;
    }
    const attachment: Attachment =
      selection && !active.empty
        ? { kind: 'selection', path: active.path, startLine: active.startLine, endLine: active.endLine }
        : { kind: 'file', path: active.path };
    await this.deps.showChat();
    this.deps.post({ type: 'attach', chip: this.chip(attachment) });
  }

  private chip(attachment: Attachment): AttachmentChip {
    return { attachment, chip: attachmentLabel(attachment, this.shown(attachment.path ?? '')) };
  }

  private shown(file: string): string {
    const root = this.deps.editor.workspaceRoot();
    const relative = root ? path.relative(root, file) : file;
    return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
  }

  private async complete(requestId: number, query: string): Promise<void> {
    const items = [...this.problemItems(), ...(await this.fileItems())];
    const ranked = rankCandidates(items, query, 30);
    const symbols = query.length >= 2 ? await this.symbolItems(query) : [];
    this.deps.post({ type: 'completions', requestId, items: [...ranked, ...rankCandidates(symbols, query, MAX_SYMBOLS)] });
  }

  private async fileItems(): Promise<CompletionItem[]> {
    const now = Date.now();
    if (!this.files || now - this.files.at > FILE_LIST_TTL_MS) {
      this.files = { at: now, paths: this.deps.editor.workspaceFiles(MAX_FILES).catch(() => []) };
    }
    const files = await this.files.paths;
    const folders = new Set<string>();
    for (const file of files) {
      for (let dir = path.dirname(file); dir !== path.dirname(dir) && this.shown(dir) !== dir; dir = path.dirname(dir)) {
        if (folders.has(dir)) break;
        folders.add(dir);
      }
    }
    return [
      ...files.map((file): CompletionItem => ({ kind: 'file', label: this.shown(file), detail: '', attachment: { kind: 'file', path: file } })),
      ...[...folders].sort().map(
        (dir): CompletionItem => ({ kind: 'folder', label: `${this.shown(dir)}/`, detail: 'folder', attachment: { kind: 'folder', path: dir } }),
      ),
    ];
  }

  /** The mention names the workspace only: the sidecar asks the editor when the message is sent (as its Problems tool
   * does). The counts are the errors and warnings, the severities it lists. */
  private problemItems(): CompletionItem[] {
    const listed = this.deps.editor.problems().filter((problem) => problem.severity === 'error' || problem.severity === 'warning');
    const errors = listed.filter((problem) => problem.severity === 'error').length;
    const detail = listed.length === 0 ? 'none right now' : `${listed.length} in the workspace, ${errors} errors`;
    return [{ kind: 'problems', label: 'problems', detail, chip: `Problems (${listed.length})`, attachment: { kind: 'problems' } }];
  }

  private async symbolItems(query: string): Promise<CompletionItem[]> {
    let symbols: EditorSymbol[];
    try {
      symbols = await this.deps.editor.workspaceSymbols(query);
    } catch {
      return []; // no symbol provider for this workspace's languages: files and folders still complete
    }
    return symbols.map((symbol) => ({
      kind: 'symbol',
      label: symbol.name,
      detail: `${symbol.kind} · ${this.shown(symbol.path)}:${symbol.startLine}`,
      attachment: { kind: 'selection', path: symbol.path, startLine: symbol.startLine, endLine: symbol.endLine, label: symbol.name },
    }));
  }

  private async listModels(): Promise<void> {
    const current = this.deps.store.state.provider.model;
    try {
      const listed = await this.deps.client.listModels(this.deps.configuredModels());
      this.deps.post({ type: 'models', current: listed.current, models: listed.models, problem: listed.problem ?? null });
    } catch (error) {
      const problem = `The models could not be listed: ${failureReason(error)}`;
      this.deps.post({ type: 'models', current, models: current ? [current] : [], problem });
    }
  }

  private async pickModel(): Promise<void> {
    let listed: { current: string; models: string[] };
    try {
      listed = await this.deps.client.listModels(this.deps.configuredModels());
    } catch (error) {
      this.deps.store.dispatch({ type: 'notice', level: 'error', text: `The models could not be listed: ${failureReason(error)}` });
      return;
    }
    const items = listed.models.map((model) => ({ label: model, description: model === listed.current ? 'current' : undefined }));
    const picked = await this.deps.notifier.pick(items, { title: 'toolgate: model for this chat', placeholder: listed.current });
    if (picked) await this.selectModel(picked.label);
  }

  private async selectModel(model: string): Promise<void> {
    const { store } = this.deps;
    try {
      const chosen = await this.deps.client.selectModel(model);
      store.dispatch({ type: 'provider', provider: { ...store.state.provider, model: chosen.model } });
      store.dispatch({ type: 'notice', level: 'info', text: chosen.message });
      this.deps.post({ type: 'models', current: chosen.model, models: [chosen.model], problem: null });
    } catch (error) {
      store.dispatch({ type: 'notice', level: 'error', text: `The model was not switched: ${failureReason(error)}` });
    }
  }

  /** Every slash command and every keybinding the extension contributes (from its package.json). */
  helpText(): string {
    const { commands, keybindings } = this.deps.manifest;
    const title = (id: string): string => commands.find((command) => command.command === id)?.title ?? id;
    const lines = ['Slash commands (type / at the start of a message):'];
    for (const command of SLASH_COMMANDS) {
      lines.push(`  /${command.name}${command.argument ? ` ${command.argument}` : ''}: ${command.description}`);
    }
    lines.push('Mentions: type @ to attach a file, folder, symbol or the problems; the chips above the box are sent.');
    lines.push(`Commands (command palette): ${commands.map((command) => `${command.category ? `${command.category}: ` : ''}${command.title}`).join(' · ')}`);
    lines.push('Keyboard shortcuts:');
    for (const binding of keybindings) lines.push(`  ${this.deps.mac ? (binding.mac ?? binding.key) : binding.key}: ${title(binding.command)}`);
    lines.push('  Enter: send · Shift+Enter: new line · Escape: interrupt (or close the list) · Alt+Shift+P: jump to the pending card');
    return lines.join('\n');
  }
}
