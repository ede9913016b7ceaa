/**
 * Per-hunk and per-file decisions inside a diff review: each hunk of a proposal gets Reject (its lines go back to
 * the original's in the proposal, which the person may still edit) and a file of a multi-file review gets Reject
 * file / Restore proposal. Accept still answers the whole review with each file's final text, and the sidecar tells
 * the model which hunks and files were applied (text/review_outcome.py). A hunk left in is a hunk accepted.
 */

import type { ResourceRef } from '../host';
import type { ProposalHunk } from '../shared/reviewHunks';
import { hunkAt, proposalHunks, rejectHunk } from '../shared/reviewHunks';
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
  command: 'toolgate.review.rejectHunk' | 'toolgate.review.rejectFile' | 'toolgate.review.restoreFile';
  /** The hunk's index (rejectHunk). */
  hunk?: number;
}

export class HunkDecisions {
  constructor(
    private readonly reviews: Pick<ReviewController, 'proposalAt'>,
    private readonly editor: ProposalEditor,
  ) {}

  /** The lenses of a proposal document (none for any other document). */
  lenses(resource: ResourceRef): ReviewLens[] {
    const state = this.state(resource);
    if (!state) return [];
    const lenses: ReviewLens[] = state.hunks.map((hunk, index) => ({
      line: hunk.start,
      title: `Reject this change (${describe(hunk)})`,
      command: 'toolgate.review.rejectHunk',
      hunk: index,
    }));
    if (state.files > 1) {
      const whole = state.text === (state.original ?? '');
      lenses.unshift(
        whole
          ? { line: 0, title: 'This file is rejected: Restore the proposal', command: 'toolgate.review.restoreFile' }
          : { line: 0, title: 'Reject this file (keep it as it is)', command: 'toolgate.review.rejectFile' },
      );
    }
    return lenses;
  }

  /** Reject hunk `index`, or the hunk under `line` (a keybinding at the cursor). False: no such hunk here. */
  async rejectHunk(resource: ResourceRef, at: { index?: number; line?: number }): Promise<boolean> {
    const state = this.state(resource);
    if (!state) return false;
    const index = at.index ?? (at.line === undefined ? undefined : hunkAt(state.hunks, at.line));
    const hunk = index === undefined ? undefined : state.hunks[index];
    if (!hunk) return false;
    await this.editor.replaceText(state.right, rejectHunk(state.text, hunk));
    return true;
  }

  /** A file of a multi-file review left as it is (the others still apply on Accept). */
  async rejectFile(resource: ResourceRef): Promise<boolean> {
    const state = this.state(resource);
    if (!state || state.original === null) return false; // a new file: reject the review, or delete its text
    await this.editor.replaceText(state.right, state.original);
    return true;
  }

  /** The model's proposal for this file back, as it first came. */
  async restoreFile(resource: ResourceRef): Promise<boolean> {
    const state = this.state(resource);
    if (!state) return false;
    await this.editor.replaceText(state.right, state.proposed);
    return true;
  }

  private state(resource: ResourceRef) {
    const found = this.reviews.proposalAt(resource);
    if (!found) return undefined;
    const text = this.editor.documentText(found.right) ?? found.proposed;
    return { ...found, text, hunks: proposalHunks(found.original ?? '', text) };
  }
}

function describe(hunk: ProposalHunk): string {
  const added = hunk.end - hunk.start;
  const removed = hunk.original.length;
  return `+${added} −${removed}`;
}
