/**
 * Where the permission rules live, by scope (DESIGN §5): local `.toolgate/settings.local.json` and project
 * `.toolgate/settings.json` in the workspace, user `$XDG_CONFIG_HOME/toolgate/settings.json`.
 */

import * as path from 'node:path';

import type { RuleScope } from './protocol';
import type { SettingsProblem } from './shared/chatModel';

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

/**
 * The sidecar's problem sentences, each with the file (and line) it names, so the chat can offer to open it.
 * A broken file reads `/path/settings.json:3:7: …`; an unusable rule reads `project (/path/settings.json): …`. The
 * files the sidecar reported are looked for first (their paths may contain anything); then any absolute `.json`
 * path (a `--settings` file).
 */
export function settingsProblems(problems: readonly string[], files: Record<string, string> | undefined): SettingsProblem[] {
  const known = Object.values(files ?? {}).sort((a, b) => b.length - a.length);
  return problems.map((text) => {
    const file = known.find((candidate) => text.includes(candidate)) ?? /(\/[^\s:()'"]+\.json)\b/.exec(text)?.[1];
    if (!file) return { text, file: null, line: null, column: null };
    const place = /^:(\d+):(\d+)/.exec(text.slice(text.indexOf(file) + file.length));
    return { text, file, line: place ? Number(place[1]) : null, column: place ? Number(place[2]) : null };
  });
}

/** Where `needle` first occurs in `text`, as a 1-based line and column (for opening a file at a rule). */
export function positionOf(text: string, needle: string): { line: number; column: number } | undefined {
  const index = needle ? text.indexOf(needle) : -1;
  if (index < 0) return undefined;
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return { line, column: index - before.lastIndexOf('\n') };
}
