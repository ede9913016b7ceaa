/** The commands a person runs (palette, view title, editor title, chat buttons), as plain functions. */

import * as fs from 'node:fs';

import type { ChatController } from './chat/controller';
import type { Notifier } from './host';
import type { PythonFailure } from './python/python';
import { installCommand } from './python/python';
import type { ReviewController } from './review/reviews';
import type { Provider } from './settings/settings';
import { apiKeySecretName } from './settings/settings';
import type { SettingsProblem, SidecarAction } from './shared/chatModel';
import type { ViewMessage } from './shared/messages';
import type { SettingsFileOpener } from './settings/settingsFileOpener';
import type { SidecarClient } from './sidecar/sidecarClient';
import type { SidecarManager } from './sidecar/sidecar';
import type { ResourceRef } from './review/proposals';
import type * as api from './vscode/vscodeApi';

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
  vscode: Pick<typeof api, 'executeCommand' | 'runInTerminal' | 'activeEditorResource' | 'resourceOf' | 'copyText'>;
  showLog(): void;
  /** The rules in force, to see, remove and add (rulesView.ts). */
  rules: { show(): Promise<void> };
  /** The settings files, to open (settingsFileOpener.ts). */
  files: Pick<SettingsFileOpener, 'openSettingsFile'>;
  /** The problems the chat's banner shows now (an "Open file" button names one by its index). */
  settingsProblems: () => readonly SettingsProblem[];
  /** The chat view: Open Chat puts the keyboard in its composer (once its script runs, in a fresh window). */
  chat: { focusComposer(): void; focusPendingCard(): void };
}

/** What the chat's buttons may ask the extension to do, besides chatting. */
export type HostAction = SidecarAction | 'setApiKey' | 'openProviderSettings' | 'openPermissionRules';

const PROVIDER_NAMES: Record<Provider, string> = { anthropic: 'Anthropic', openai: 'OpenAI (or compatible)' };

export class Commands {
  constructor(private readonly deps: CommandDeps) {}

  async openChat(): Promise<void> {
    await this.deps.vscode.executeCommand('toolgate.chat.focus');
    // Focusing the view focuses its frame; the composer inside is asked for too, because a view whose script is
    // still loading misses the frame's focus event (the keyboard demo typed into nothing in a fresh window).
    this.deps.chat.focusComposer();
  }

  /** Alt+Shift+P from anywhere: the chat, with the keyboard on the first card waiting for the person. */
  async focusPendingCard(): Promise<void> {
    await this.deps.vscode.executeCommand('toolgate.chat.focus');
    this.deps.chat.focusPendingCard();
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
    // The review's tabs are closed; the turn goes on in the chat, where the next thing is typed.
    await this.openChat();
  }

  /** A message from the chat view: its buttons for the host are commands; the rest is the chat's (the controller). */
  async viewMessage(message: ViewMessage): Promise<void> {
    switch (message.type) {
      case 'sidecarAction':
        return this.sidecarAction(message.action);
      case 'setApiKey':
      case 'openProviderSettings':
      case 'openPermissionRules':
        return this.sidecarAction(message.type);
      case 'copy':
        return this.deps.vscode.copyText(message.text);
      case 'openSettingsProblem': {
        const problem = this.deps.settingsProblems()[message.index];
        if (problem?.file) await this.deps.files.openSettingsFile(problem.file, problem);
        return;
      }
      default:
        return this.deps.controller.handle(message);
    }
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
