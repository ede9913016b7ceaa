/**
 * The settings files and their problems, as the sidecar reports them (`toolgate/settings/get`): each file by
 * scope, each problem with its file, line and column. Nothing here works out where a file lives or parses a
 * sentence: the sidecar's permission engine knows, and says so in structure. This module only arranges it.
 */

import type { Settings, SidecarSettingsProblem } from '../protocol';
import type { FileScope } from '../shared/scopes';
import { FILE_SCOPE_LABELS } from '../shared/scopes';
import type { SettingsProblem } from '../shared/chatModel';

/** What the sidecar said about its files: scope → path, and the `--settings` files it reads too. */
export type SettingsFiles = Pick<Settings, 'settingsFiles' | 'flagFiles'>;

export interface RulesFile {
  label: string;
  path: string;
}

/** The files to offer in "Open a settings file…": project, local, user, then any `--settings` file. */
export function rulesFiles(files: SettingsFiles): RulesFile[] {
  const order: FileScope[] = ['project', 'local', 'user'];
  return [
    ...order.flatMap((scope) => {
      const reported = files.settingsFiles[scope];
      return reported ? [{ label: FILE_SCOPE_LABELS[scope], path: reported }] : [];
    }),
    // An older sidecar sends no flagFiles.
    ...(files.flagFiles ?? []).map((path) => ({ label: 'Settings file given with --settings', path })),
  ];
}

/** What a new rules file starts with, shown as an unsaved document so nothing is written unless saved. */
export const EMPTY_RULES_FILE = `${JSON.stringify({ permissions: { allow: [], ask: [], deny: [] } }, null, 2)}\n`;

/** The sidecar's problems as the chat's banner shows them: the sentence, and the place to open. */
export function bannerProblems(problems: readonly SidecarSettingsProblem[]): SettingsProblem[] {
  return problems.map(({ message, file, line, column }) => ({ text: message, file, line, column }));
}

/** Where to open a file at: a place the sidecar named, when it named a line. */
export function placeOf(at: { line: number | null; column: number | null }): { line: number; column: number } | undefined {
  return at.line ? { line: at.line, column: at.column ?? 1 } : undefined;
}
