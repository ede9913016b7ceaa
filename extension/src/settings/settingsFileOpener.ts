/**
 * Opening the settings files: the picker of rules files, and a file at the place the sidecar named for a rule or a
 * problem. Where the files are is the sidecar's to say (`toolgate/settings/get`); without a sidecar, this says so.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

import type { Notifier } from '../host';
import type { SettingsFiles } from './permissionFiles';
import { EMPTY_RULES_FILE, placeOf, rulesFiles } from './permissionFiles';
import type { SidecarClient } from '../sidecar/sidecarClient';
import type * as api from '../vscode/vscodeApi';

export interface SettingsFileOpenerDeps {
  notifier: Notifier;
  client: Pick<SidecarClient, 'getSettings'>;
  /** The session on screen, whose settings say where its rule files are. */
  currentSessionId: () => string | null;
  vscode: Pick<typeof api, 'openFileOrDraft' | 'firstWorkspaceFolder'>;
  restartSidecar(): Promise<void>;
  showLog(): void;
}

/** A new MCP settings file: the one key toolgate reads there, empty, for the person to fill in. */
const EMPTY_MCP_SETTINGS = '{\n  "mcpServers": {\n  }\n}\n';

export class SettingsFileOpener {
  constructor(private readonly deps: SettingsFileOpenerDeps) {}

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
      await this.noSidecar();
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

  /**
   * Where an MCP server is added (the MCP view's welcome): the workspace's `.mcp.json`, shared with the project, or
   * the user settings file, for all projects (its path is the sidecar's to say). A file not created yet opens as a
   * draft with an empty `mcpServers`, saved only when the person saves it.
   */
  async openMcpSettings(where: 'workspace' | 'user'): Promise<void> {
    const { notifier, vscode, client } = this.deps;
    let file: string | undefined;
    if (where === 'workspace') {
      const root = vscode.firstWorkspaceFolder();
      if (!root) {
        void notifier.show('warning', 'There is no workspace folder to keep a .mcp.json in: open a folder first.');
        return;
      }
      file = path.join(root, '.mcp.json');
    } else {
      const sessionId = this.deps.currentSessionId();
      try {
        file = sessionId ? (await client.getSettings(sessionId)).settingsFiles.user : undefined;
      } catch {
        file = undefined; // no sidecar to ask: explained below
      }
      if (!file) {
        await this.noSidecar();
        return;
      }
    }
    await vscode.openFileOrDraft(file, fs.existsSync(file), EMPTY_MCP_SETTINGS);
  }

  /** Only the sidecar knows where the settings files are: without one, say so, with the two ways forward. */
  private async noSidecar(): Promise<void> {
    const picked = await this.deps.notifier.show(
      'warning',
      'toolgate cannot list its settings files while the sidecar is not running: the sidecar knows where they ' +
        'are. Restart it; if it does not start, its log says why.',
      'Restart Sidecar',
      'Show Log',
    );
    if (picked === 'Restart Sidecar') await this.deps.restartSidecar();
    if (picked === 'Show Log') this.deps.showLog();
  }

  /** Open a settings file: at the place the sidecar named (a problem's, a rule's), or at the top. */
  async openSettingsFile(path: string, at?: { line: number | null; column: number | null }): Promise<void> {
    const exists = fs.existsSync(path);
    await this.deps.vscode.openFileOrDraft(path, exists, EMPTY_RULES_FILE, at ? placeOf(at) : undefined);
  }
}
