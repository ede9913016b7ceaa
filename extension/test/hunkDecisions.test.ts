import { describe, expect, it } from 'vitest';

import type { ResourceRef } from '../src/host';
import { HunkDecisions } from '../src/review/hunkDecisions';

const RIGHT: ResourceRef = { scheme: 'toolgate-proposed', path: '/r1-0/a.py' };
const ORIGINAL = 'a\nb\nc\nd\ne\nf\n';
const PROPOSED = 'a\nB\nc\nd\ne\nF\n';

function setup(files = 1, original: string | null = ORIGINAL) {
  const texts = new Map<string, string>();
  const skips: boolean[] = [];
  const reviews = {
    proposalAt: (resource: ResourceRef) =>
      resource.path === RIGHT.path ? { original, proposed: PROPOSED, right: RIGHT, files, skipped: false } : undefined,
    skipFile: (resource: ResourceRef, skipped: boolean) => {
      skips.push(skipped);
      return true;
    },
  };
  const editor = {
    documentText: (resource: ResourceRef) => texts.get(resource.path),
    async replaceText(resource: ResourceRef, text: string) {
      texts.set(resource.path, text);
    },
  };
  return { decisions: new HunkDecisions(reviews, editor), texts, skips };
}

describe('per-hunk decisions in a review', () => {
  it('puts Accept and Reject above each hunk, and a rejected hunk’s lines back as they were', async () => {
    const { decisions, texts } = setup();
    expect(decisions.lenses(RIGHT).map((lens) => [lens.line, lens.title])).toEqual([
      [1, 'Accept this change'],
      [1, 'Reject this change (+1 −1)'],
      [5, 'Accept this change'],
      [5, 'Reject this change (+1 −1)'],
    ]);
    expect(await decisions.rejectHunk(RIGHT, { index: 1 })).toBe(true);
    expect(texts.get(RIGHT.path)).toBe('a\nB\nc\nd\ne\nf\n');
    expect(decisions.lenses(RIGHT)).toHaveLength(2); // the lenses follow the proposal as it is now
  });

  it('an accepted hunk stays in the proposal, decided; when all are, one lens accepts the review', async () => {
    const { decisions, texts } = setup();
    expect(decisions.acceptHunk(RIGHT, { line: 5 })).toBe(true);
    expect(texts.get(RIGHT.path)).toBeUndefined(); // accepting edits nothing
    expect(decisions.lenses(RIGHT).map((lens) => [lens.line, lens.command])).toEqual([
      [1, 'toolgate.review.acceptHunk'],
      [1, 'toolgate.review.rejectHunk'],
    ]);
    expect(decisions.acceptHunk(RIGHT, { line: 3 })).toBe(false); // no change on that line
    // Rejecting the first hunk with a different line count moves the accepted one, which stays decided.
    texts.set(RIGHT.path, 'a\nB1\nB2\nc\nd\ne\nF\n');
    expect(decisions.lenses(RIGHT).map((lens) => lens.line)).toEqual([1, 1]);
    await decisions.rejectHunk(RIGHT, { index: 0 });
    expect(texts.get(RIGHT.path)).toBe('a\nb\nc\nd\ne\nF\n');
    expect(decisions.lenses(RIGHT)).toEqual([
      { line: 0, title: 'Every change here is decided: Accept the review', command: 'toolgate.review.accept' },
    ]);
    // The person edits an accepted hunk: it is a new change, undecided again.
    texts.set(RIGHT.path, 'a\nb\nc\nd\ne\nF, edited\n');
    expect(decisions.lenses(RIGHT).map((lens) => lens.command)).toEqual(['toolgate.review.acceptHunk', 'toolgate.review.rejectHunk']);
  });

  it('rejects the hunk under the cursor, and nothing where there is none', async () => {
    const { decisions, texts } = setup();
    expect(await decisions.rejectHunk(RIGHT, { line: 3 })).toBe(false);
    expect(await decisions.rejectHunk(RIGHT, { line: 1 })).toBe(true);
    expect(texts.get(RIGHT.path)).toBe('a\nb\nc\nd\ne\nF\n');
    expect(decisions.lenses({ scheme: 'file', path: '/a.py' })).toEqual([]);
  });

  it('offers a file of a multi-file review to be rejected whole, and its proposal back', async () => {
    const { decisions, texts } = setup(2);
    expect(decisions.lenses(RIGHT)[0]).toMatchObject({ line: 0, command: 'toolgate.review.rejectFile' });
    await decisions.rejectFile(RIGHT);
    expect(texts.get(RIGHT.path)).toBe(ORIGINAL);
    expect(decisions.lenses(RIGHT)).toEqual([
      { line: 0, title: 'This file is rejected: Restore the proposal', command: 'toolgate.review.restoreFile' },
    ]);
    await decisions.restoreFile(RIGHT);
    expect(texts.get(RIGHT.path)).toBe(PROPOSED);
    // A new file is left out of the answer by the review (reviews.test.ts), not emptied.
    const created = setup(2, null);
    expect(await created.decisions.rejectFile(RIGHT)).toBe(true);
    expect([created.skips, created.texts.size]).toEqual([[true], 0]);
  });
});
