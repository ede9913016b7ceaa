/**
 * Diff reviews (`toolgate/diff/review`): every proposed file opens as a diff of its original (read-only) against the
 * proposal (an in-memory file the person may edit). Accept or Reject from the editor title or from the chat card
 * answers the whole review; the answer carries each file's final text, and the review's tabs close. A new file
 * diffs against an empty original; a deletion diffs against an empty proposal.
 */

import type { AcceptEditsSwitch } from './acceptEdits';
import type { ChatPresence, ChatStore } from '../chat/chatStore';
import type { CancellationLike, DiffEditorHost, Disposable, Notifier } from '../host';
import type { DiffReviewAnswer, DiffReviewParams, ReviewedFile } from '../protocol';
import type { ProposalStore, ResourceRef } from './proposals';
import { reviewIdOf, reviewPath } from './proposals';
import type { ReviewFileView } from '../shared/chatModel';
import type { LeftOut } from '../shared/outcomes';
import { ACCEPT_EDITS_ON, WITHDRAWN, acceptedOutcome, basename, displayPath, rejectedOutcome } from '../shared/outcomes';
import { failureReason } from '../sidecar/sidecarClient';

export { basename, displayPath };

interface ReviewFile {
  path: string;
  original: string | null;
  proposed: string | null;
  left: ResourceRef;
  right: ResourceRef;
  /** A file the person left as it is: a new file not created, a deletion not made (the others still apply). */
  skipped: boolean;
}

/** One file of a review as its lenses see it; `text`: the proposal as the person has it now (null: a deletion). */
export interface FileUnderReview {
  path: string;
  original: string | null;
  proposed: string | null;
  right: ResourceRef;
  skipped: boolean;
  text: string | null;
}

interface PendingReview {
  id: string;
  params: DiffReviewParams;
  files: ReviewFile[];
  resolve: (answer: DiffReviewAnswer) => void;
  subscriptions: Disposable[];
  settled: boolean;
  /** The mode is being switched for "Accept, and accept edits": other answers wait for it. */
  switching: boolean;
}

export function changeOf(file: { original: string | null; proposed: string | null }): ReviewFileView['change'] {
  if (file.original === null) return 'create';
  if (file.proposed === null) return 'delete';
  return 'modify';
}

export function diffTitle(file: { path: string; original: string | null; proposed: string | null }): string {
  const name = basename(file.path);
  switch (changeOf(file)) {
    case 'create':
      return `${name} (new file) ↔ toolgate proposal`;
    case 'delete':
      return `${name} ↔ deleted by toolgate proposal`;
    case 'modify':
      return `${name} ↔ toolgate proposal`;
  }
}

export class ReviewController implements Disposable {
  private readonly reviews = new Map<string, PendingReview>();
  /** The person's notes on lines of each review's proposals, sent with its answer. */
  private readonly notes = new Map<string, { path: string; line: number; text: string }[]>();
  private counter = 0;

  constructor(
    private readonly proposed: ProposalStore,
    private readonly originals: ProposalStore,
    private readonly editor: DiffEditorHost,
    private readonly store: ChatStore,
    private readonly presence: ChatPresence,
    private readonly notifier: Notifier,
    private readonly onPendingChanged: () => void = () => undefined,
    private readonly workspaceFolder: () => string | undefined = () => undefined,
    private readonly acceptEdits: AcceptEditsSwitch = async () => {
      throw new Error('this editor cannot switch the mode');
    },
  ) {}

  get pendingCount(): number {
    return this.reviews.size;
  }

  /** Handle one `toolgate/diff/review`: open the diffs, wait for Accept or Reject. */
  review(params: DiffReviewParams, token?: CancellationLike): Promise<DiffReviewAnswer> {
    const id = `r${++this.counter}`;
    const files = params.files.map((file, index): ReviewFile => {
      // Each file gets its own directory, so two proposals for the same path never share a document.
      const path = reviewPath(`${id}-${index}`, file.path);
      return {
        path: file.path,
        original: file.original,
        proposed: file.proposed,
        skipped: false,
        left: { scheme: this.originals.scheme, path },
        right:
          file.proposed === null
            ? { scheme: this.originals.scheme, path: reviewPath(`${id}-${index}-deleted`, file.path) }
            : { scheme: this.proposed.scheme, path },
      };
    });
    for (const file of files) {
      this.originals.put(file.left.path, file.original ?? '');
      if (file.proposed === null) this.originals.put(file.right.path, '');
      else this.proposed.put(file.right.path, file.proposed);
    }
    return new Promise<DiffReviewAnswer>((resolve) => {
      const review: PendingReview = { id, params, files, resolve, subscriptions: [], settled: false, switching: false };
      this.reviews.set(id, review);
      this.store.dispatch({
        type: 'reviewRequested',
        id,
        toolUseId: params.toolUseId,
        title: params.title,
        reason: params.reason ?? '',
        files: files.map((file) => ({
          path: file.path,
          label: displayPath(file.path, this.workspaceFolder()),
          change: changeOf(file),
        })),
        offersAcceptEdits: params.offersAcceptEdits === true,
        at: Date.now(),
      });
      this.onPendingChanged();
      if (token) {
        if (token.isCancellationRequested) {
          void this.finish(id, 'cancelled', '');
          return;
        }
        review.subscriptions.push(token.onCancellationRequested(() => void this.finish(id, 'cancelled', '')));
      }
      void this.show(id, null);
      if (!this.presence.isVisible()) void this.notify(review);
    });
  }

  /**
   * Open (or bring back) the diff of one file of a review, or of every file when `path` is null. `focus`: the
   * person asked for it (Show diff, a file's name on the card), so the keyboard goes into the last diff opened.
   */
  async show(id: string, path: string | null, focus: boolean = false): Promise<void> {
    const review = this.reviews.get(id);
    if (!review) return;
    const files = review.files.filter((file) => path === null || file.path === path);
    for (const [index, file] of files.entries()) {
      await this.editor.openDiff(file.left, file.right, diffTitle(file), focus && index === files.length - 1);
    }
  }

  /** The review a diff editor belongs to, from either side's URI. */
  reviewFor(resource: ResourceRef): string | undefined {
    if (resource.scheme !== this.proposed.scheme && resource.scheme !== this.originals.scheme) return undefined;
    const directory = reviewIdOf(resource.path);
    const id = directory?.split('-')[0];
    return id && this.reviews.has(id) ? id : undefined;
  }

  /** The review whose proposal (or deletion) is this document: its files, which one this is (`at`), its id. */
  reviewAt(resource: ResourceRef): { id: string; at: number; files: FileUnderReview[] } | undefined {
    const found = this.fileAt(resource);
    if (!found) return undefined;
    const files = found.review.files.map((file) => {
      const { path, original, proposed, right, skipped } = file;
      return { path, original, proposed, right, skipped, text: this.finalText(file) };
    });
    return { id: found.review.id, at: found.review.files.indexOf(found.file), files };
  }

  /**
   * Leave a new file or a deletion of a multi-file review out (`skipped`: the file stays as it is), or put it back.
   * A file that exists and stays is rejected by taking its proposal back to the original instead, so this is false
   * for it, for a one-file review, and for no review.
   */
  skipFile(resource: ResourceRef, skipped: boolean): boolean {
    const found = this.fileAt(resource);
    const whole = found && (found.file.original === null || found.file.proposed === null);
    if (!found || !whole || found.review.files.length < 2) return false;
    found.file.skipped = skipped;
    return true;
  }

  /** A note for the model on a line (0-based) of a proposal under review; false when this is not one. */
  addNote(resource: ResourceRef, line: number, text: string): boolean {
    const found = this.fileAt(resource);
    if (!found || text.trim() === '') return false;
    const notes = this.notes.get(found.review.id) ?? [];
    this.notes.set(found.review.id, [...notes, { path: found.file.path, line: line + 1, text: text.trim() }]);
    return true;
  }

  private fileAt(resource: ResourceRef): { review: PendingReview; file: ReviewFile } | undefined {
    const id = this.reviewFor(resource);
    const review = id ? this.reviews.get(id) : undefined;
    const file = review?.files.find((candidate) => candidate.right.scheme === resource.scheme && candidate.right.path === resource.path);
    return review && file ? { review, file } : undefined;
  }

  accept(id: string): Promise<void> {
    return this.finish(id, 'accepted', '');
  }

  /**
   * "Accept, and accept edits": the session switches to acceptEdits mode first; if the sidecar refuses, the review
   * stays open and its card says why.
   */
  async acceptAndAcceptEdits(id: string): Promise<void> {
    const review = this.reviews.get(id);
    if (!review || review.settled || review.switching) return;
    review.switching = true;
    try {
      await this.acceptEdits(review.params.sessionId, review.params.toolUseId);
    } catch (error) {
      review.switching = false;
      const reason = `The mode was not changed: ${failureReason(error)}`;
      if (this.reviews.has(id)) this.store.dispatch({ type: 'reviewFailed', id, error: reason });
      return;
    }
    review.switching = false;
    await this.finish(id, 'accepted', '', true);
  }

  reject(id: string, feedback: string = ''): Promise<void> {
    return this.finish(id, 'rejected', feedback);
  }

  /** Withdraw every open review (the sidecar stopped). */
  cancelAll(): void {
    for (const id of [...this.reviews.keys()]) void this.finish(id, 'cancelled', '');
  }

  dispose(): void {
    this.cancelAll();
  }

  private async finish(
    id: string,
    outcome: 'accepted' | 'rejected' | 'cancelled',
    feedback: string,
    acceptedEdits = false,
  ): Promise<void> {
    const review = this.reviews.get(id);
    if (!review || review.settled || (review.switching && outcome !== 'cancelled')) return;
    review.settled = true;
    for (const subscription of review.subscriptions) subscription.dispose();
    let answer: DiffReviewAnswer;
    let edited: string[] = [];
    let skipped: LeftOut[] = [];
    const notes = this.notes.get(id) ?? [];
    this.notes.delete(id);
    if (outcome === 'accepted') {
      // Save first: the editor's latest keystrokes may not have reached this extension host yet, and a save makes
      // the editor send them (to the store, and to this host's copy of the document) before it answers.
      await this.saveProposals(review).catch(() => undefined);
      const files = review.files.map(
        (file): ReviewedFile => (file.skipped ? { path: file.path, content: null, skipped: true } : { path: file.path, content: this.finalText(file) }),
      );
      edited = review.files.filter((file, index) => !file.skipped && file.proposed !== files[index]?.content).map((file) => file.path);
      skipped = review.files.filter((file) => file.skipped).map((file) => ({ path: file.path, change: changeOf(file) }));
      answer = { decision: 'accept', files };
    } else {
      const trimmed = feedback.trim();
      answer = trimmed ? { decision: 'reject', feedback: trimmed } : { decision: 'reject' };
    }
    if (notes.length > 0 && outcome !== 'cancelled') answer = { ...answer, notes };
    try {
      await this.closeEditors(review, outcome !== 'accepted');
    } finally {
      for (const file of review.files) {
        this.originals.removeTree(parentOf(file.left.path));
        this.originals.removeTree(parentOf(file.right.path));
        this.proposed.removeTree(parentOf(file.right.path));
      }
      this.reviews.delete(id);
      this.store.dispatch({
        type: 'reviewResolved',
        id,
        state: outcome,
        outcome: describeOutcome(outcome, edited, skipped, feedback, acceptedEdits),
        ...(skipped.length > 0 ? { leftOut: skipped.map((file) => file.path) } : {}),
        at: Date.now(),
      });
      this.onPendingChanged();
      review.resolve(answer);
    }
  }

  /** The text the person accepted: the open editor's (with unsaved edits) if open, else the stored proposal. */
  private finalText(file: ReviewFile): string | null {
    if (file.proposed === null) return null;
    return this.editor.documentText(file.right) ?? this.proposed.text(file.right.path) ?? file.proposed;
  }

  private async saveProposals(review: PendingReview): Promise<void> {
    for (const file of review.files) if (file.proposed !== null) await this.editor.saveDocument(file.right);
  }

  private async closeEditors(review: PendingReview, save: boolean): Promise<void> {
    // Closing a modified proposal would ask whether to save it; saving only writes to the in-memory store.
    if (save) await this.saveProposals(review);
    await this.editor.closeTabs(review.files.flatMap((file) => [file.left, file.right]));
  }

  private async notify(review: PendingReview): Promise<void> {
    const names = review.files.map((file) => basename(file.path));
    const what = names.length === 1 ? names[0] : `${names[0]} and ${names.length - 1} more`;
    const picked = await this.notifier.show(
      'info',
      `toolgate proposes changes to ${what}. Review the diff (you may edit the proposal), then accept or reject.`,
      'Accept',
      ...(review.params.offersAcceptEdits ? [ACCEPT_EDITS_ACTION] : []),
      'Reject',
      'Show Diff',
    );
    if (!this.reviews.has(review.id)) return;
    if (picked === 'Accept') await this.accept(review.id);
    else if (picked === ACCEPT_EDITS_ACTION) await this.acceptAndAcceptEdits(review.id);
    else if (picked === 'Reject') await this.reject(review.id);
    else if (picked === 'Show Diff') await this.show(review.id, null, true);
  }
}

const ACCEPT_EDITS_ACTION = 'Accept, Accept Edits';

function parentOf(path: string): string {
  return path.slice(0, path.indexOf('/', 1));
}

function describeOutcome(
  outcome: 'accepted' | 'rejected' | 'cancelled',
  edited: string[],
  skipped: LeftOut[],
  feedback: string,
  acceptedEdits: boolean,
): string {
  switch (outcome) {
    case 'accepted':
      return acceptedEdits ? `${acceptedOutcome(edited, skipped)} ${ACCEPT_EDITS_ON}` : acceptedOutcome(edited, skipped);
    case 'rejected':
      return rejectedOutcome(feedback);
    case 'cancelled':
      return WITHDRAWN;
  }
}
