import { describe, expect, it } from 'vitest';

import { hunkAt, proposalHunks, rejectHunk } from '../src/shared/reviewHunks';

const ORIGINAL = 'a\nb\nc\nd\ne\nf\ng\nh\n';
const PROPOSED = 'a\nB\nc\nd\ne\nf\ng\nadded\n';

describe('a proposal, hunk by hunk', () => {
  it('finds each run of changed lines, removals included', () => {
    expect(proposalHunks(ORIGINAL, PROPOSED)).toEqual([
      { start: 1, end: 2, original: ['b\n'] },
      { start: 7, end: 8, original: ['h\n'] },
    ]);
    expect(proposalHunks('a\nb\nc\n', 'a\nc\n')).toEqual([{ start: 1, end: 1, original: ['b\n'] }]);
    expect(proposalHunks(ORIGINAL, ORIGINAL)).toEqual([]);
  });

  it('rejects one hunk and keeps the others, and the person’s edits elsewhere', () => {
    const [first, second] = proposalHunks(ORIGINAL, PROPOSED);
    expect(rejectHunk(PROPOSED, second!)).toBe('a\nB\nc\nd\ne\nf\ng\nh\n');
    const edited = PROPOSED.replace('d\n', 'd, edited\n');
    const hunks = proposalHunks(ORIGINAL, edited);
    expect(hunks).toHaveLength(3);
    expect(rejectHunk(edited, hunks[0]!)).toBe('a\nb\nc\nd, edited\ne\nf\ng\nadded\n');
    expect(rejectHunk(PROPOSED, first!)).toBe('a\nb\nc\nd\ne\nf\ng\nadded\n');
  });

  it('rejecting every hunk, last first, gives the original back', () => {
    const proposal = 'x\na\nc\nD\ne\nnew\ng\n';
    let text = proposal;
    for (const hunk of [...proposalHunks(ORIGINAL, proposal)].reverse()) text = rejectHunk(text, hunk);
    expect(text).toBe(ORIGINAL);
  });

  it('names the hunk under a line', () => {
    const hunks = proposalHunks(ORIGINAL, PROPOSED);
    expect([0, 1, 7].map((line) => hunkAt(hunks, line))).toEqual([undefined, 0, 1]);
  });
});
