/**
 * Per-hunk and per-file decisions inside a diff review: each undecided hunk of a proposal gets Accept and Reject
 * (Reject puts its lines back to the original's in the proposal, which the person may still edit; Accept only marks
 * it decided, so its lenses go) and a file of a multi-file review gets Reject file / Restore proposal (a new file is
 * then left out of the answer, skipped, rather than emptied: the sidecar does not create it). Once every
 * hunk of a file is decided, one lens answers the review. Accept still answers the whole review with each file's
 * final text, and the sidecar tells the model which hunks and files were applied (text/review_outcome.py). A hunk
 * left in is a hunk accepted, decided or not.
 */

import type { ResourceRef } from '../host';
import type { ProposalHunk } from '../shared/reviewHunks';
import { hunkAt, hunkKeys, proposalHunks, rejectHunk } from '../shared/reviewHunks';
import type { ReviewController } from './reviews';

export interface ProposalEditor {
  /** The open document's text, unsaved edits included (undefined: not open). */
  documentText(resource: ResourceRef): string | undefined;
  /** Replace the open document's whole text (an edit the person can undo). */
  replaceText(resource: ResourceRef, text: string): Promise<void>;
}

export interface ReviewLens {
  /** 0-based line of the proposal the lens sits above. */
  line: number;
  title: string;
  command:
    | 'toolgate.review.acceptHunk'
    | 'toolgate.review.rejectHunk'
    | 'toolgate.review.rejectFile'
    | 'toolgate.review.restoreFile'
    | 'toolgate.review.accept';
  /** The hunk's index (acceptHunk, rejectHunk). */
  hunk?: number;
}

/** Where a hunk command acts: the lens's hunk, or the hunk under the cursor's line (a keybinding). */
export interface HunkTarget {
  index?: number;
  line?: number;
}

export class HunkDecisions {
  /** The hunks the person accepted, by proposal document (`scheme:path`), named by `hunkKeys`. */
  private readonly accepted = new Map<string, Set<string>>();

  constructor(
    private readonly reviews: Pick<ReviewController, 'proposalAt' | 'skipFile'>,
    private readonly editor: ProposalEditor,
  ) {}

  /** The lenses of a proposal document (none for any other document). */
  lenses(resource: ResourceRef): ReviewLens[] {
    const state = this.state(resource);
    if (!state) return [];
    if (state.skipped) {
      return [{ line: 0, title: 'This new file will not be created: Restore the proposal', command: 'toolgate.review.restoreFile' }];
    }
    const lenses: ReviewLens[] = state.hunks.flatMap((hunk, index) =>
      state.decided[index]
        ? []
        : [
            { line: hunk.start, title: 'Accept this change', command: 'toolgate.review.acceptHunk' as const, hunk: index },
            { line: hunk.start, title: `Reject this change (${describe(hunk)})`, command: 'toolgate.review.rejectHunk' as const, hunk: index },
          ],
    );
    if (state.hunks.length > 0 && state.decided.every(Boolean)) {
      lenses.unshift({ line: 0, title: 'Every change here is decided: Accept the review', command: 'toolgate.review.accept' });
    }
    if (state.files > 1) {
      const whole = state.text === (state.original ?? '');
      lenses.unshift(
        whole
          ? { line: 0, title: 'This file is rejected: Restore the proposal', command: 'toolgate.review.restoreFile' }
          : {
              line: 0,
              title: state.original === null ? 'Reject this file (do not create it)' : 'Reject this file (keep it as it is)',
              command: 'toolgate.review.rejectFile',
            },
      );
    }
    return lenses;
  }

  /** Accept hunk `index`, or the hunk under `line`: it stays in the proposal, decided. False: no such hunk here. */
  acceptHunk(resource: ResourceRef, at: HunkTarget): boolean {
    const state = this.state(resource);
    const index = state && indexOf(state.hunks, at);
    if (!state || index === undefined) return false;
    const accepted = this.accepted.get(keyOf(state.right)) ?? new Set<string>();
    accepted.add(state.keys[index] ?? '');
    this.accepted.set(keyOf(state.right), accepted);
    return true;
  }

  /** Reject hunk `index`, or the hunk under `line` (a keybinding at the cursor). False: no such hunk here. */
  async rejectHunk(resource: ResourceRef, at: HunkTarget): Promise<boolean> {
    const state = this.state(resource);
    const index = state && indexOf(state.hunks, at);
    const hunk = index === undefined ? undefined : state?.hunks[index];
    if (!state || !hunk) return false;
    await this.editor.replaceText(state.right, rejectHunk(state.text, hunk));
    return true;
  }

  /** A file of a multi-file review left as it is (the others still apply on Accept); a new file is not created. */
  async rejectFile(resource: ResourceRef): Promise<boolean> {
    const state = this.state(resource);
    if (!state) return false;
    if (state.original === null) return this.reviews.skipFile(resource, true); // false alone: reject the review
    await this.editor.replaceText(state.right, state.original);
    return true;
  }

  /** The model's proposal for this file back: a skipped new file as the person left it, any other as it first came. */
  async restoreFile(resource: ResourceRef): Promise<boolean> {
    const state = this.state(resource);
    if (!state) return false;
    if (state.skipped) return this.reviews.skipFile(resource, false);
    await this.editor.replaceText(state.right, state.proposed);
    return true;
  }

  private state(resource: ResourceRef) {
    const found = this.reviews.proposalAt(resource);
    if (!found) {
      this.accepted.delete(keyOf(resource)); // the review is over
      return undefined;
    }
    const text = this.editor.documentText(found.right) ?? found.proposed;
    const hunks = proposalHunks(found.original ?? '', text);
    const keys = hunkKeys(text, hunks);
    const accepted = this.accepted.get(keyOf(found.right));
    return { ...found, text, hunks, keys, decided: keys.map((key) => accepted?.has(key) === true) };
  }
}

function keyOf(resource: ResourceRef): string {
  return `${resource.scheme}:${resource.path}`;
}

function indexOf(hunks: readonly ProposalHunk[], at: HunkTarget): number | undefined {
  const index = at.index ?? (at.line === undefined ? undefined : hunkAt(hunks, at.line));
  return index !== undefined && index >= 0 && index < hunks.length ? index : undefined;
}

function describe(hunk: ProposalHunk): string {
  const added = hunk.end - hunk.start;
  const removed = hunk.original.length;
  return `+${added} −${removed}`;
}
