/** The commands a person runs (palette, view title, editor title, chat buttons), as plain functions. */

import * as fs from 'node:fs';

import type { ChatController, HostAction } from './controller';
import type { Notifier } from './host';
import type { PythonFailure } from './python';
import { installCommand } from './python';
import type { SettingsFiles } from './permissionFiles';
import { EMPTY_RULES_FILE, placeOf, rulesFiles } from './permissionFiles';
import type { ReviewController } from './reviews';
import type { Provider } from './settings';
import { apiKeySecretName } from './settings';
import type { SidecarAction } from './shared/chatModel';
import type { SidecarClient } from './sidecarClient';
import type { SidecarManager } from './sidecar';
import type { ResourceRef } from './proposals';
import type * as api from './vscodeApi';

export interface CommandDeps {
  notifier: Notifier;
  manager: SidecarManager;
  client: SidecarClient;
  controller: ChatController;
  reviews: ReviewController;
  secrets: { store(key: string, value: string): Promise<void>; delete(key: string): Promise<void> };
  provider: () => Provider;
  /** Where the bundled sidecar package is (the extension's `python/` folder). */
  packageDir: string;
  workspaceFolder: () => string | undefined;
  /** The session on screen, whose settings say where its rule files are. */
  currentSessionId: () => string | null;
  vscode: Pick<
    typeof api,
    'executeCommand' | 'openFileOrDraft' | 'runInTerminal' | 'activeEditorResource' | 'resourceOf'
  >;
  showLog(): void;
  /** The rules in force, to see, remove and add (rulesView.ts). */
  rules: { show(): Promise<void> };
}

const PROVIDER_NAMES: Record<Provider, string> = { anthropic: 'Anthropic', openai: 'OpenAI (or compatible)' };

export class Commands {
  constructor(private readonly deps: CommandDeps) {}

  async openChat(): Promise<void> {
    await this.deps.vscode.executeCommand('toolgate.chat.focus');
  }

  async setApiKey(): Promise<void> {
    const provider = this.deps.provider();
    const key = await this.deps.notifier.input({
      title: `toolgate: API key for ${PROVIDER_NAMES[provider]}`,
      prompt:
        'Kept in the editor\'s secret storage and handed to the sidecar in its environment; never written to a file. ' +
        'Leave empty and press Enter to remove the stored key.',
      placeholder: provider === 'anthropic' ? 'sk-ant-…' : 'sk-…',
      password: true,
    });
    if (key === undefined) return;
    const name = apiKeySecretName(provider);
    if (key.trim() === '') {
      await this.deps.secrets.delete(name);
      void this.deps.notifier.show('info', `The stored ${PROVIDER_NAMES[provider]} API key was removed.`);
    } else {
      await this.deps.secrets.store(name, key.trim());
      void this.deps.notifier.show('info', `The ${PROVIDER_NAMES[provider]} API key is stored; the sidecar restarts to use it.`);
    }
    // The secrets listener restarts the sidecar with the new environment.
  }

  async openPermissionRules(): Promise<void> {
    await this.deps.rules.show();
  }

  /**
   * The rules files, to open one. `reported` is what the sidecar said its engine reads (settings/get); without it,
   * the open session's settings are asked for. Only the sidecar knows where the files are: without one, say so.
   */
  async openRulesFile(reported?: SettingsFiles): Promise<void> {
    const { notifier, vscode, client } = this.deps;
    let files = reported;
    const sessionId = this.deps.currentSessionId();
    if (!files && sessionId) {
      try {
        files = await client.getSettings(sessionId);
      } catch {
        files = undefined; // no sidecar to ask: explained below
      }
    }
    if (!files) {
      const picked = await notifier.show(
        'warning',
        'toolgate cannot list its settings files while the sidecar is not running: the sidecar knows where they ' +
          'are. Restart it; if it does not start, its log says why.',
        'Restart Sidecar',
        'Show Log',
      );
      if (picked === 'Restart Sidecar') await this.restartSidecar();
      if (picked === 'Show Log') this.deps.showLog();
      return;
    }
    const picked = await notifier.pick(
      rulesFiles(files).map((file) => ({
        label: file.label,
        description: fs.existsSync(file.path) ? undefined : 'not created yet',
        detail: file.path,
        file,
      })),
      { title: 'toolgate: Open Permission Rules', placeholder: 'Which rules file?' },
    );
    if (!picked) return;
    await vscode.openFileOrDraft(picked.file.path, fs.existsSync(picked.file.path), EMPTY_RULES_FILE);
  }

  /** Open a settings file: at the place the sidecar named (a problem's, a rule's), or at the top. */
  async openSettingsFile(path: string, at?: { line: number | null; column: number | null }): Promise<void> {
    const exists = fs.existsSync(path);
    await this.deps.vscode.openFileOrDraft(path, exists, EMPTY_RULES_FILE, at ? placeOf(at) : undefined);
  }

  async newSession(): Promise<void> {
    await this.openChat();
    await this.deps.controller.newSession();
  }

  async interrupt(): Promise<void> {
    await this.deps.controller.interrupt();
  }

  async restartSidecar(): Promise<void> {
    await this.deps.manager.restart();
  }

  /** Accept or reject the review whose diff is in the active editor (or the one the editor-title button names). */
  async answerReview(decision: 'accept' | 'reject', target: unknown): Promise<void> {
    const { reviews, vscode, notifier } = this.deps;
    const resource: ResourceRef | undefined = vscode.resourceOf(target) ?? vscode.activeEditorResource();
    const id = resource ? reviews.reviewFor(resource) : undefined;
    if (!id) {
      void notifier.show('info', 'There is no open toolgate review in this editor (it may have been answered already).');
      return;
    }
    if (decision === 'accept') await reviews.accept(id);
    else await reviews.reject(id);
  }

  async sidecarAction(action: HostAction): Promise<void> {
    const { manager, vscode } = this.deps;
    switch (action) {
      case 'openProviderSettings':
        // The provider, model and base URL settings (and the rest of toolgate's) in the Settings editor.
        await vscode.executeCommand('workbench.action.openSettings', '@ext:toolgate.toolgate');
        return;
      case 'openPermissionRules':
        return this.openPermissionRules();
      case 'restartSidecar':
        return manager.restart();
      case 'showLog':
        this.deps.showLog();
        return;
      case 'openPythonSetting':
        await vscode.executeCommand('workbench.action.openSettings', 'toolgate.python.path');
        return;
      case 'selectPython':
        try {
          await vscode.executeCommand('python.setInterpreter');
        } catch {
          await vscode.executeCommand('workbench.action.openSettings', 'toolgate.python.path');
        }
        return;
      case 'installToolgate':
        return this.installToolgate();
      case 'setApiKey':
        return this.setApiKey();
    }
  }

  /** Offer the fix for a Python problem as a notification (the chat shows it too). */
  async notifyPythonProblem(problem: PythonFailure): Promise<void> {
    const labels: Partial<Record<SidecarAction, string>> = {
      installToolgate: 'Install toolgate',
      openPythonSetting: 'Set Python Path',
      selectPython: 'Select Python',
      showLog: 'Show Log',
    };
    const actions = problem.actions.filter((action) => labels[action]);
    const picked = await this.deps.notifier.show(
      'error',
      `${problem.message} ${problem.fix}`,
      ...actions.map((action) => labels[action] ?? action),
    );
    const action = actions.find((candidate) => labels[candidate] === picked);
    if (action) await this.sidecarAction(action);
  }

  private async installToolgate(): Promise<void> {
    const state = this.deps.manager.state;
    const python = state.kind === 'unavailable' ? (state.python.executable ?? state.python.candidate.command) : 'python3';
    if (!fs.existsSync(this.deps.packageDir)) {
      void this.deps.notifier.show(
        'error',
        `This installation of the extension has no bundled sidecar package (${this.deps.packageDir}). Install toolgate ` +
          'from its source with pip, then restart the sidecar.',
      );
      return;
    }
    this.deps.vscode.runInTerminal('toolgate: install', installCommand(python, this.deps.packageDir));
    const picked = await this.deps.notifier.show(
      'info',
      'Installing toolgate in the terminal. When pip has finished, restart the sidecar.',
      'Restart Sidecar',
    );
    if (picked === 'Restart Sidecar') await this.deps.manager.restart();
  }
}
