/**
 * A proposal under review, hunk by hunk: the runs of lines where the proposal (as the person has it now, edits
 * included) differs from the original, and a hunk's rejection (those lines back as they were). The sidecar reads
 * the person's decisions from the final text (text/review_outcome.py), so rejecting here is only an edit of the
 * proposal. Pure: no DOM, no Node, no `vscode`.
 */

export interface ProposalHunk {
  /** The hunk's lines in the proposal: [start, end) (0-based); start === end for lines the proposal removed. */
  start: number;
  end: number;
  /** The original's lines it replaces, each with its ending. */
  original: string[];
}

/** Above this many lines on both sides, the whole file is one hunk (the comparison grows with their product). */
const MAX_CELLS = 4_000_000;

export function splitLines(text: string): string[] {
  const parts = text.split('\n');
  const lines = parts.slice(0, -1).map((part) => `${part}\n`);
  const last = parts[parts.length - 1] ?? '';
  if (last !== '') lines.push(last);
  return lines;
}

/** Each run of lines where `proposal` differs from `original`, in order. */
export function proposalHunks(original: string, proposal: string): ProposalHunk[] {
  const a = splitLines(original);
  const b = splitLines(proposal);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  if (midA.length === 0 && midB.length === 0) return [];
  if (midA.length * midB.length > MAX_CELLS) return [{ start: head, end: head + midB.length, original: midA }];
  return commonRuns(midA, midB).map((hunk) => ({ start: hunk.start + head, end: hunk.end + head, original: hunk.original }));
}

/** The proposal with one hunk's lines back as the original had them. */
export function rejectHunk(proposal: string, hunk: ProposalHunk): string {
  const lines = splitLines(proposal);
  return [...lines.slice(0, hunk.start), ...hunk.original, ...lines.slice(hunk.end)].join('');
}

/** The hunk that holds a proposal line (0-based); a removal's hunk holds the line where its lines were. */
export function hunkAt(hunks: readonly ProposalHunk[], line: number): number | undefined {
  const index = hunks.findIndex((hunk) => (hunk.start === hunk.end ? line === hunk.start : line >= hunk.start && line < hunk.end));
  return index < 0 ? undefined : index;
}

/**
 * A name for each hunk that survives decisions on the others: where it starts in the original (rejecting or editing
 * another hunk moves it in the proposal, never in the original) and both sides' lines. A hunk the person edits gets
 * a new name: it is a new change, undecided again.
 */
export function hunkKeys(proposal: string, hunks: readonly ProposalHunk[]): string[] {
  const lines = splitLines(proposal);
  let shift = 0; // proposal lines minus original lines in the hunks before
  return hunks.map((hunk) => {
    const key = JSON.stringify([hunk.start - shift, hunk.original, lines.slice(hunk.start, hunk.end)]);
    shift += hunk.end - hunk.start - hunk.original.length;
    return key;
  });
}

/** Longest common subsequence of lines, as the runs between its matches. */
function commonRuns(a: string[], b: string[]): ProposalHunk[] {
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j] ? (table[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(table[(i + 1) * width + j] ?? 0, table[i * width + j + 1] ?? 0);
    }
  }
  const hunks: ProposalHunk[] = [];
  let i = 0;
  let j = 0;
  let open: { i: number; j: number } | null = null;
  const close = () => {
    if (open) hunks.push({ start: open.j, end: j, original: a.slice(open.i, i) });
    open = null;
  };
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      close();
      i++;
      j++;
    } else {
      open ??= { i, j };
      if (j >= b.length || (i < a.length && (table[(i + 1) * width + j] ?? 0) >= (table[i * width + j + 1] ?? 0))) i++;
      else j++;
    }
  }
  close();
  return hunks;
}
