/**
 * How each rule scope reads in the editor: one definition for the approval and rules-view pickers, the files
 * picker and the "comes from" line of a listed rule. Where a scope's file lives is the sidecar's to say.
 */

import type { RuleScope } from '../protocol';

export type FileScope = Exclude<RuleScope, 'session'>;

interface ScopeWords {
  /** Where to keep a new rule (the scope pickers). */
  choice: string;
  /** Where a listed rule comes from. */
  source: string;
}

export const SCOPE_WORDS: Record<RuleScope, ScopeWords> = {
  session: { choice: 'This session only', source: 'this session only' },
  local: { choice: 'This project, just for me (.toolgate/settings.local.json)', source: 'Local project rules' },
  project: { choice: 'This project, shared (.toolgate/settings.json)', source: 'Project rules' },
  user: { choice: 'All my projects (user settings)', source: 'User rules' },
};

/** A scope's file in the files picker: what is in it, and who it is for. */
export const FILE_SCOPE_LABELS: Record<FileScope, string> = {
  project: `${SCOPE_WORDS.project.source} (shared with the repository)`,
  local: `${SCOPE_WORDS.local.source} (just for you, not committed)`,
  user: `${SCOPE_WORDS.user.source} (all your projects)`,
};

/** The scope pickers' labels. */
export const SCOPE_LABELS = Object.fromEntries(
  Object.entries(SCOPE_WORDS).map(([scope, words]) => [scope, words.choice]),
) as Record<RuleScope, string>;
