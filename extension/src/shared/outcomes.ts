/**
 * What an answered approval or review card says, in one place: the live answer (approvals.ts, reviews.ts) and a
 * reopened session's history (chatModel.ts) use the same words. Pure.
 */

import type { RuleScope } from '../protocol';
import { SCOPE_LABELS } from './scopes';

export const WITHDRAWN = 'Withdrawn: the turn ended before an answer.';
export const UNANSWERED = 'Not answered: the editor gave no usable answer, so the call did not run.';
export const ALLOWED_ONCE = 'Allowed once.';
/**
 * An allow in a stored session: the transcript does not (yet) say whether an "always allow" rule was saved with it,
 * so history says no more than it knows rather than "once".
 */
export const ALLOWED = 'Allowed.';

/** An "always allow": the rule saved, where, and whether it covers the very call it was written for. */
export function alwaysAllowedOutcome(
  rule: string,
  scope: RuleScope,
  coversCall: boolean | null | undefined,
  warnings: readonly string[] = [],
): string {
  const where = SCOPE_LABELS[scope].split(' (')[0]?.toLowerCase();
  const parts = [`Allowed. From now on ${rule} is allowed (${where}).`];
  if (coversCall === false) {
    parts.push('That rule does not cover this call itself, so a call like it will be asked about again.');
  }
  parts.push(...warnings);
  return parts.join(' ');
}

/** What answering by switching the session to acceptEdits mode ("…, and accept edits") adds to the outcome. */
export const ACCEPT_EDITS_ON =
  'This session is now in "Accept edits" mode: file changes inside the workspace run without asking ' +
  '(the mode menu at the top switches back).';

/** An approval answered with "Allow, and accept edits". */
export const ACCEPTED_EDITS = `Allowed. ${ACCEPT_EDITS_ON}`;

export function deniedOutcome(feedback: string): string {
  const trimmed = feedback.trim();
  return trimmed ? `Denied, with feedback: ${trimmed}` : 'Denied.';
}

/** A file of an accepted review that the person left as it was: a new file not created, a deletion not made. */
export interface LeftOut {
  path: string;
  change: 'create' | 'modify' | 'delete';
}

const LEFT_OUT: Record<LeftOut['change'], string> = { create: 'not created', delete: 'kept, not deleted', modify: 'left as it was' };

export function acceptedOutcome(editedPaths: readonly string[], skipped: readonly LeftOut[] = []): string {
  const without = skipped.length > 0 ? `, without ${skipped.map((file) => `${basename(file.path)} (${LEFT_OUT[file.change]})`).join(', ')}` : '';
  if (editedPaths.length > 0) return `Accepted with your edits to ${editedPaths.map(basename).join(', ')}${without}.`;
  return without ? `Accepted${without}.` : 'Accepted as proposed.';
}

export function rejectedOutcome(feedback: string): string {
  const trimmed = feedback.trim();
  return trimmed ? `Rejected, with feedback: ${trimmed}` : 'Rejected.';
}

export function basename(path: string): string {
  const parts = path.replaceAll('\\', '/').split('/');
  return parts[parts.length - 1] || path;
}

/** A path relative to the workspace folder when it is inside it, else as given. */
export function displayPath(path: string, workspaceFolder: string | undefined): string {
  if (!workspaceFolder) return path;
  const root = workspaceFolder.replace(/[\\/]+$/, '');
  const normalised = path.replaceAll('\\', '/');
  const prefix = `${root.replaceAll('\\', '/')}/`;
  return normalised.startsWith(prefix) ? normalised.slice(prefix.length) : path;
}
