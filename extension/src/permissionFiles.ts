/**
 * Where the permission rules live, by scope (DESIGN §5): local `.toolgate/settings.local.json` and project
 * `.toolgate/settings.json` in the workspace, user `$XDG_CONFIG_HOME/toolgate/settings.json`.
 */

import * as path from 'node:path';

import type { RuleScope } from './protocol';

export type FileScope = Exclude<RuleScope, 'session'>;

export const FILE_SCOPE_LABELS: Record<FileScope, string> = {
  project: 'Project rules (shared with the repository)',
  local: 'Local project rules (just for you, not committed)',
  user: 'User rules (all your projects)',
};

export function permissionFiles(
  workspaceFolder: string | undefined,
  env: NodeJS.ProcessEnv,
  home: string,
): { scope: FileScope; path: string }[] {
  const configHome = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  const files: { scope: FileScope; path: string }[] = [];
  if (workspaceFolder) {
    files.push({ scope: 'project', path: path.join(workspaceFolder, '.toolgate', 'settings.json') });
    files.push({ scope: 'local', path: path.join(workspaceFolder, '.toolgate', 'settings.local.json') });
  }
  files.push({ scope: 'user', path: path.join(configHome, 'toolgate', 'settings.json') });
  return files;
}

/** The files the sidecar reported (`settingsFiles` of `toolgate/settings/get`, scope → path), in our order. */
export function filesFromSettings(
  reported: Record<string, string> | undefined,
  fallback: { scope: FileScope; path: string }[],
): { scope: FileScope; path: string }[] {
  const order: FileScope[] = ['project', 'local', 'user'];
  const files = order.flatMap((scope) => (reported?.[scope] ? [{ scope, path: reported[scope] }] : []));
  return files.length > 0 ? files : fallback;
}

/** What a new rules file starts with, shown as an unsaved document so nothing is written unless saved. */
export const EMPTY_RULES_FILE = `${JSON.stringify({ permissions: { allow: [], ask: [], deny: [] } }, null, 2)}\n`;
