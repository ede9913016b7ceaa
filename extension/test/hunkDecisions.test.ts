import { describe, expect, it } from 'vitest';

import type { ResourceRef } from '../src/host';
import { HunkDecisions } from '../src/review/hunkDecisions';

const RIGHT: ResourceRef = { scheme: 'toolgate-proposed', path: '/r1-0/a.py' };
const ORIGINAL = 'a\nb\nc\nd\ne\nf\n';
const PROPOSED = 'a\nB\nc\nd\ne\nF\n';

interface FakeFile {
  path: string;
  original: string | null;
  proposed: string | null;
}

const A: FakeFile = { path: '/ws/a.py', original: ORIGINAL, proposed: PROPOSED };
const B: FakeFile = { path: '/ws/b.py', original: 'x\ny\n', proposed: 'x\nY\nz\n' };

/** A review of `files` (the first one's proposal is RIGHT); `texts`: the proposals as the person edited them. */
function setup(files: FakeFile[] = [A]) {
  const texts = new Map<string, string>();
  const skips: boolean[] = [];
  const shown: string[] = [];
  const under = files.map((file, index) => ({
    ...file,
    right: index === 0 ? RIGHT : { scheme: 'toolgate-proposed', path: `/r1-${index}${file.path}` },
    skipped: false,
  }));
  const reviews = {
    reviewAt: (resource: ResourceRef) => {
      const at = under.findIndex((file) => file.right.path === resource.path);
      if (at < 0) return undefined;
      const text = (file: (typeof under)[number]) => (file.proposed === null ? null : (texts.get(file.right.path) ?? file.proposed));
      return { id: 'r1', at, files: under.map((file) => ({ ...file, text: text(file) })) };
    },
    skipFile: (resource: ResourceRef, skipped: boolean) => {
      skips.push(skipped);
      const file = under.find((candidate) => candidate.right.path === resource.path);
      if (file) file.skipped = skipped;
      return true;
    },
    show: async (id: string, path: string | null) => void shown.push(`${id} ${path}`),
  };
  const editor = {
    async replaceText(resource: ResourceRef, text: string) {
      texts.set(resource.path, text);
    },
  };
  return { decisions: new HunkDecisions(reviews, editor), texts, skips, shown, rights: under.map((file) => file.right) };
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
    const { decisions, texts } = setup([A, B]);
    expect(decisions.lenses(RIGHT)[0]).toMatchObject({ line: 0, command: 'toolgate.review.rejectFile' });
    await decisions.rejectFile(RIGHT);
    expect(texts.get(RIGHT.path)).toBe(ORIGINAL);
    expect(decisions.lenses(RIGHT)).toEqual([
      { line: 0, title: 'This file is rejected: Restore the proposal', command: 'toolgate.review.restoreFile' },
      { line: 0, title: 'Decided here; still undecided: b.py. Open b.py', command: 'toolgate.review.nextFile' },
    ]);
    await decisions.restoreFile(RIGHT);
    expect(texts.get(RIGHT.path)).toBe(PROPOSED);
    // A new file is left out of the answer by the review (reviews.test.ts), not emptied.
    const created = setup([{ ...A, original: null }, B]);
    expect(await created.decisions.rejectFile(RIGHT)).toBe(true);
    expect([created.skips, created.texts.size]).toEqual([[true], 0]);
  });

  it('never accepts the review from a file while another file is undecided: it opens that file instead', async () => {
    const { decisions, shown, rights } = setup([A, B, { path: '/ws/new.py', original: null, proposed: 'n\n' }]);
    const [a = RIGHT, b = RIGHT, created = RIGHT] = rights;
    decisions.acceptHunk(a, { index: 0 });
    decisions.acceptHunk(a, { index: 1 });
    expect(decisions.lenses(a)).toEqual([
      { line: 0, title: 'Reject this file (keep it as it is)', command: 'toolgate.review.rejectFile' },
      { line: 0, title: 'Decided here; still undecided: b.py, new.py. Open b.py', command: 'toolgate.review.nextFile' },
    ]);
    expect(await decisions.nextFile(a)).toBe(true);
    expect(shown).toEqual(['r1 /ws/b.py']);
    // b.py's one change is rejected (decided), and new.py left out: now every file is decided.
    await decisions.rejectHunk(b, { index: 0 });
    expect(decisions.lenses(b).map((lens) => lens.title)).toEqual([
      'This file is rejected: Restore the proposal',
      'Decided here; still undecided: new.py. Open new.py',
    ]);
    await decisions.rejectFile(created);
    const accept = { line: 0, title: 'Every file is decided: Accept the review (1 file changes +2 −2, 2 stay as they are)', command: 'toolgate.review.accept' };
    for (const file of [a, b, created]) expect(decisions.lenses(file)).toContainEqual(accept);
    expect(await decisions.nextFile(a)).toBe(false);
  });

  it('names the first three undecided files and counts the rest', () => {
    const others = ['b', 'c', 'd', 'e', 'f'].map((name) => ({ ...B, path: `/ws/${name}.py` }));
    const { decisions } = setup([A, ...others]);
    decisions.acceptHunk(RIGHT, { index: 0 });
    decisions.acceptHunk(RIGHT, { index: 1 });
    expect(decisions.lenses(RIGHT)[1]).toEqual({
      line: 0,
      title: 'Decided here; still undecided: b.py, c.py, d.py and 2 more. Open b.py',
      command: 'toolgate.review.nextFile',
    });
  });

  it('a deletion is accepted whole or its file kept; its read-only side is never edited', async () => {
    const deleted: FakeFile = { path: '/ws/old.py', original: 'o\nl\nd\n', proposed: null };
    const { decisions, texts, skips, rights } = setup([A, deleted]);
    const gone = rights[1] ?? RIGHT;
    expect(decisions.lenses(gone)).toEqual([
      { line: 0, title: 'Reject this file (keep it, do not delete it)', command: 'toolgate.review.rejectFile' },
      { line: 0, title: 'Accept this deletion (+0 −3)', command: 'toolgate.review.acceptHunk', hunk: 0 },
    ]);
    expect(await decisions.rejectHunk(gone, { index: 0 })).toBe(false);
    expect(await decisions.rejectFile(gone)).toBe(true);
    expect([skips, texts.size]).toEqual([[true], 0]);
    expect(decisions.lenses(gone)).toEqual([
      { line: 0, title: 'This file will not be deleted: Restore the proposal', command: 'toolgate.review.restoreFile' },
      { line: 0, title: 'Decided here; still undecided: a.py. Open a.py', command: 'toolgate.review.nextFile' },
    ]);
    expect(await decisions.restoreFile(gone)).toBe(true);
    expect(decisions.acceptHunk(gone, { line: 0 })).toBe(true);
    expect(decisions.lenses(gone).map((lens) => lens.command)).toEqual(['toolgate.review.rejectFile', 'toolgate.review.nextFile']);
  });
});
