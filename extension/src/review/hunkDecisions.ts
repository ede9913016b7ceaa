/**
 * Per-hunk and per-file decisions inside a diff review: each undecided hunk of a proposal gets Accept and Reject
 * (Reject puts its lines back to the original's in the proposal, which the person may still edit; Accept only marks
 * it decided, so its lenses go) and a file of a multi-file review gets Reject file / Restore proposal (a new file or
 * a deletion is then left out of the answer, skipped, rather than emptied: the sidecar neither creates nor deletes
 * it). A deletion's side is read-only: it is accepted as a whole, or its file is kept.
 *
 * A lens on one file never answers for files the person has not decided. A file is decided when it is left out, is
 * back to its original, or every change in it is accepted. Once the file in view is decided, one lens says what is
 * next: in a one-file review it accepts the review; in a multi-file review it opens the next undecided file, and once
 * every file is decided it accepts the review, saying how many files change and by how many lines. Accept in the
 * editor title or on the chat card still answers the whole review at once, as it says. The answer carries each
 * file's final text, and the sidecar tells the model which hunks and files were applied (text/review_outcome.py).
 * A hunk left in is a hunk accepted, decided or not.
 */

import type { ResourceRef } from '../host';
import type { ProposalHunk } from '../shared/reviewHunks';
import { hunkAt, hunkKeys, proposalHunks, rejectHunk } from '../shared/reviewHunks';
import { basename } from '../shared/outcomes';
import type { FileUnderReview, ReviewController } from './reviews';

export interface ProposalEditor {
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
    | 'toolgate.review.nextFile'
    | 'toolgate.review.accept';
  /** The hunk's index (acceptHunk, rejectHunk). */
  hunk?: number;
}

/** Where a hunk command acts: the lens's hunk, or the hunk under the cursor's line (a keybinding). */
export interface HunkTarget {
  index?: number;
  line?: number;
}

/** One file of a review with its hunks as the proposal is now, and which of them the person accepted. */
interface FileState extends FileUnderReview {
  /** The proposal now ('' for a deletion: every line goes). */
  current: string;
  hunks: ProposalHunk[];
  keys: string[];
  accepted: boolean[];
  /** A file that exists, back to its original in the proposal: rejected whole. */
  rejected: boolean;
  /** Nothing is left to decide here: left out, rejected whole, or every change accepted. */
  decided: boolean;
}

export class HunkDecisions {
  /** The hunks the person accepted, by proposal document (`scheme:path`), named by `hunkKeys`. */
  private readonly accepted = new Map<string, Set<string>>();
  /**
   * The hunks of each file of the review last looked at, by proposal document, with the text they are of. Every lens
   * needs every file's hunks (is the file decided?), and a keystroke changes one file: the others are not diffed again.
   */
  private hunkCache: { review: string; files: Map<string, { text: string; hunks: ProposalHunk[]; keys: string[] }> } = {
    review: '',
    files: new Map(),
  };

  constructor(
    private readonly reviews: Pick<ReviewController, 'reviewAt' | 'skipFile' | 'show'>,
    private readonly editor: ProposalEditor,
  ) {}

  /** The lenses of a proposal (or deletion) document under review (none for any other document). */
  lenses(resource: ResourceRef): ReviewLens[] {
    const found = this.review(resource);
    if (!found) return [];
    const { files, state } = found;
    const lenses: ReviewLens[] = [];
    if (files.length > 1) lenses.push(fileLens(state));
    if (state.decided) lenses.push(...nextLens(files, state));
    if (state.skipped) return lenses;
    for (const [index, hunk] of state.hunks.entries()) {
      if (state.accepted[index]) continue;
      if (state.proposed === null) {
        lenses.push({ line: 0, title: `Accept this deletion (${describe(hunk)})`, command: 'toolgate.review.acceptHunk', hunk: index });
        continue;
      }
      lenses.push(
        { line: hunk.start, title: 'Accept this change', command: 'toolgate.review.acceptHunk', hunk: index },
        { line: hunk.start, title: `Reject this change (${describe(hunk)})`, command: 'toolgate.review.rejectHunk', hunk: index },
      );
    }
    return lenses;
  }

  /** Accept hunk `index`, or the hunk under `line`: it stays in the proposal, decided. False: no such hunk here. */
  acceptHunk(resource: ResourceRef, at: HunkTarget): boolean {
    const state = this.review(resource)?.state;
    const index = state && indexOf(state.hunks, at);
    if (!state || index === undefined) return false;
    const accepted = this.accepted.get(keyOf(state.right)) ?? new Set<string>();
    accepted.add(state.keys[index] ?? '');
    this.accepted.set(keyOf(state.right), accepted);
    return true;
  }

  /** Reject hunk `index`, or the hunk under `line` (a keybinding at the cursor). False: no such hunk here. */
  async rejectHunk(resource: ResourceRef, at: HunkTarget): Promise<boolean> {
    const state = this.review(resource)?.state;
    const index = state && indexOf(state.hunks, at);
    const hunk = index === undefined ? undefined : state?.hunks[index];
    // A deletion has no proposal to edit: its file is kept with Reject file, or the review is rejected.
    if (!state || !hunk || state.proposed === null) return false;
    await this.editor.replaceText(state.right, rejectHunk(state.current, hunk));
    return true;
  }

  /**
   * A file of a multi-file review left as it is (the others still apply on Accept): a new file is not created, a
   * deletion is not made, any other file's proposal goes back to its original.
   */
  async rejectFile(resource: ResourceRef): Promise<boolean> {
    const state = this.review(resource)?.state;
    if (!state) return false;
    if (state.original === null || state.proposed === null) return this.reviews.skipFile(resource, true); // false alone: reject the review
    await this.editor.replaceText(state.right, state.original);
    return true;
  }

  /** The model's proposal for this file back: a file left out as the person left it, any other as it first came. */
  async restoreFile(resource: ResourceRef): Promise<boolean> {
    const state = this.review(resource)?.state;
    if (!state) return false;
    if (state.skipped) return this.reviews.skipFile(resource, false);
    if (state.proposed === null) return false;
    await this.editor.replaceText(state.right, state.proposed);
    return true;
  }

  /** Open the next file of this review with something left to decide, after this one. False: there is none. */
  async nextFile(resource: ResourceRef): Promise<boolean> {
    const found = this.review(resource);
    const next = found && undecidedAfter(found.files, found.state)[0];
    if (!found || !next) return false;
    await this.reviews.show(found.id, next.path, true);
    return true;
  }

  private review(resource: ResourceRef): { id: string; files: FileState[]; state: FileState } | undefined {
    const found = this.reviews.reviewAt(resource);
    if (!found) {
      this.accepted.delete(keyOf(resource)); // the review is over
      return undefined;
    }
    if (this.hunkCache.review !== found.id) this.hunkCache = { review: found.id, files: new Map() };
    const files = found.files.map((file) => this.fileState(file));
    const state = files[found.at];
    return state && { id: found.id, files, state };
  }

  private fileState(file: FileUnderReview): FileState {
    const current = file.text ?? '';
    const { hunks, keys } = this.hunksOf(file, current);
    const acceptedKeys = this.accepted.get(keyOf(file.right));
    const accepted = keys.map((key) => acceptedKeys?.has(key) === true);
    const rejected = file.original !== null && file.proposed !== null && current === file.original;
    const decided = file.skipped || rejected || accepted.every(Boolean);
    return { ...file, current, hunks, keys, accepted, rejected, decided };
  }

  private hunksOf(file: FileUnderReview, current: string): { hunks: ProposalHunk[]; keys: string[] } {
    const cached = this.hunkCache.files.get(keyOf(file.right));
    if (cached?.text === current) return cached;
    const hunks = proposalHunks(file.original ?? '', current);
    const computed = { text: current, hunks, keys: hunkKeys(current, hunks) };
    this.hunkCache.files.set(keyOf(file.right), computed);
    return computed;
  }
}

/** Reject this file, or restore it once it is left out or back to its original. */
function fileLens(state: FileState): ReviewLens {
  if (state.skipped) {
    return {
      line: 0,
      title: state.original === null ? 'This new file will not be created: Restore the proposal' : 'This file will not be deleted: Restore the proposal',
      command: 'toolgate.review.restoreFile',
    };
  }
  if (state.rejected) return { line: 0, title: 'This file is rejected: Restore the proposal', command: 'toolgate.review.restoreFile' };
  const keep = state.original === null ? 'do not create it' : state.proposed === null ? 'keep it, do not delete it' : 'keep it as it is';
  return { line: 0, title: `Reject this file (${keep})`, command: 'toolgate.review.rejectFile' };
}

/** How many undecided files the "still undecided" lens names. */
const NAMED_FILES = 3;

/** What comes after deciding this file: the next undecided file, or (every file decided) the review's answer. */
function nextLens(files: readonly FileState[], state: FileState): ReviewLens[] {
  if (files.length === 1) {
    const decidedHere = state.hunks.length > 0; // a one-file review with nothing left in is rejected, not accepted
    return decidedHere ? [{ line: 0, title: 'Every change here is decided: Accept the review', command: 'toolgate.review.accept' }] : [];
  }
  const undecided = undecidedAfter(files, state);
  const first = undecided[0];
  if (first) {
    // A rename may touch dozens of files: a lens is one line, so the first few are named and the rest counted.
    const named = undecided.slice(0, NAMED_FILES).map((file) => basename(file.path));
    const more = undecided.length - named.length;
    const names = more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
    return [{ line: 0, title: `Decided here; still undecided: ${names}. Open ${basename(first.path)}`, command: 'toolgate.review.nextFile' }];
  }
  return [{ line: 0, title: `Every file is decided: Accept the review (${reviewCounts(files)})`, command: 'toolgate.review.accept' }];
}

/** The other undecided files, starting after `state` and wrapping around. */
function undecidedAfter(files: readonly FileState[], state: FileState): FileState[] {
  const at = files.indexOf(state);
  return [...files.slice(at + 1), ...files.slice(0, at)].filter((file) => !file.decided);
}

/** "2 files change +3 −1, 1 stays as it is": what accepting the review does, as the proposals are now. */
function reviewCounts(files: readonly FileState[]): string {
  const changing = files.filter((file) => !file.skipped && (file.hunks.length > 0 || file.original === null || file.proposed === null));
  const added = changing.reduce((sum, file) => sum + file.hunks.reduce((lines, hunk) => lines + hunk.end - hunk.start, 0), 0);
  const removed = changing.reduce((sum, file) => sum + file.hunks.reduce((lines, hunk) => lines + hunk.original.length, 0), 0);
  const staying = files.length - changing.length;
  const change = `${changing.length} ${changing.length === 1 ? 'file changes' : 'files change'} +${added} −${removed}`;
  return staying === 0 ? change : `${change}, ${staying} ${staying === 1 ? 'stays as it is' : 'stay as they are'}`;
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
