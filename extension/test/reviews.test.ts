import { describe, expect, it } from 'vitest';

import { ORIGINAL_SCHEME, PROPOSED_SCHEME, ProposalStore, StoreError } from '../src/review/proposals';
import type { DiffReviewParams } from '../src/protocol';
import { HunkDecisions } from '../src/review/hunkDecisions';
import { ReviewController, diffTitle, displayPath } from '../src/review/reviews';
import { ACCEPT_EDITS_ON } from '../src/shared/outcomes';
import { FakeCancellation, FakeEditor, FakeNotifier, FakePresence, newStore, settle } from './fakes';

function setup(visible = true, switchRefusal?: string) {
  const store = newStore();
  const proposed = new ProposalStore(PROPOSED_SCHEME, false);
  const originals = new ProposalStore(ORIGINAL_SCHEME, true);
  const editor = new FakeEditor();
  const notifier = new FakeNotifier();
  const presence = new FakePresence(visible);
  // Saving a proposal in the editor writes it to the in-memory store, as the real file system provider does.
  editor.onSave = (resource, text) =>
    proposed.writeFile(resource.path, new TextEncoder().encode(text), { create: false, overwrite: true });
  const switched: [string, string][] = [];
  const acceptEdits = async (sessionId: string, toolUseId: string): Promise<void> => {
    if (switchRefusal) throw new Error(switchRefusal);
    switched.push([sessionId, toolUseId]);
  };
  const reviews = new ReviewController(proposed, originals, editor, store, presence, notifier, undefined, () => '/ws', acceptEdits);
  return { store, proposed, originals, editor, notifier, presence, reviews, switched };
}

const edit: DiffReviewParams = {
  sessionId: 's1',
  toolUseId: 'toolu_1',
  toolName: 'Edit',
  reason: 'Edits ask first in the default mode.',
  suggestions: [],
  offersAcceptEdits: false,
  title: 'Edit src/app.py',
  files: [{ path: '/ws/src/app.py', original: 'print("hi")\n', proposed: 'print("hello")\n' }],
};

const patch: DiffReviewParams = {
  sessionId: 's1',
  toolUseId: 'toolu_2',
  toolName: 'ApplyPatch',
  reason: '',
  suggestions: [],
  offersAcceptEdits: false,
  title: 'Apply patch',
  files: [
    { path: '/ws/a.txt', original: 'a\n', proposed: 'A\n' },
    { path: '/ws/new.txt', original: null, proposed: 'brand new\n' },
    { path: '/ws/old.txt', original: 'bye\n', proposed: null },
  ],
};

function reviewCard(store: ReturnType<typeof newStore>) {
  const item = store.state.items.find((candidate) => candidate.kind === 'review');
  if (!item || item.kind !== 'review') throw new Error('no review card');
  return item;
}

describe('ReviewController', () => {
  it('moves the keyboard into the diff the person asked to see (the last one, when it shows every file)', async () => {
    const { reviews, editor } = setup();
    void reviews.review(patch);
    await settle();
    editor.opened.length = 0;
    await reviews.show('r1', null, true);
    expect(editor.opened.map((diff) => diff.focus)).toEqual([false, false, true]);
    editor.opened.length = 0;
    await reviews.show('r1', '/ws/a.txt', true);
    expect(editor.opened).toMatchObject([{ title: 'a.txt ↔ toolgate proposal', focus: true }]);
  });

  it('opens a diff of the read-only original against the editable proposal', async () => {
    const { reviews, editor, originals, proposed, store } = setup();
    void reviews.review(edit);
    await settle();
    expect(editor.opened).toEqual([
      {
        left: `${ORIGINAL_SCHEME}:/r1-0/ws/src/app.py`,
        right: `${PROPOSED_SCHEME}:/r1-0/ws/src/app.py`,
        title: 'app.py ↔ toolgate proposal',
        focus: false, // opened by itself: the cursor stays where the person is typing
      },
    ]);
    expect(originals.text('/r1-0/ws/src/app.py')).toBe('print("hi")\n');
    expect(proposed.text('/r1-0/ws/src/app.py')).toBe('print("hello")\n');
    expect(() => originals.writeFile('/r1-0/ws/src/app.py', new Uint8Array(), { create: false, overwrite: true })).toThrow(
      StoreError,
    );
    expect(reviewCard(store)).toMatchObject({
      title: 'Edit src/app.py',
      state: 'pending',
      files: [{ path: '/ws/src/app.py', label: 'src/app.py', change: 'modify' }],
    });
  });

  it('accepts as proposed: the answer carries the text, the tabs close, the stores are emptied', async () => {
    const { reviews, editor, proposed, originals, store } = setup();
    const answer = reviews.review(edit);
    await reviews.accept('r1');
    await expect(answer).resolves.toEqual({
      decision: 'accept',
      files: [{ path: '/ws/src/app.py', content: 'print("hello")\n' }],
    });
    expect(editor.closed).toEqual([[`${ORIGINAL_SCHEME}:/r1-0/ws/src/app.py`, `${PROPOSED_SCHEME}:/r1-0/ws/src/app.py`]]);
    expect(proposed.text('/r1-0/ws/src/app.py')).toBeUndefined();
    expect(originals.text('/r1-0/ws/src/app.py')).toBeUndefined();
    expect(reviewCard(store)).toMatchObject({ state: 'accepted', outcome: 'Accepted as proposed.' });
  });

  it('accepts the person\'s unsaved edits to the proposal', async () => {
    const { reviews, editor, store } = setup();
    const answer = reviews.review(edit);
    editor.edit(`${PROPOSED_SCHEME}:/r1-0/ws/src/app.py`, 'print("hello, world")\n');
    await reviews.accept('r1');
    await expect(answer).resolves.toEqual({
      decision: 'accept',
      files: [{ path: '/ws/src/app.py', content: 'print("hello, world")\n' }],
    });
    // The edited proposal was saved to the in-memory store before its tab closed (no "save changes?" prompt).
    expect(editor.saved).toEqual([`${PROPOSED_SCHEME}:/r1-0/ws/src/app.py`]);
    expect(reviewCard(store).outcome).toBe('Accepted with your edits to app.py.');
  });

  it('accepts the last keystrokes too, even when they had not reached the extension host at Accept', async () => {
    const { reviews, editor, proposed } = setup();
    const answer = reviews.review(edit);
    const uri = `${PROPOSED_SCHEME}:/r1-0/ws/src/app.py`;
    editor.edit(uri, 'print("hello")\n');
    editor.typeUnsynced(uri, 'print("hello")  # reviewed\n');
    await reviews.accept('r1');
    expect((await answer).files).toEqual([{ path: '/ws/src/app.py', content: 'print("hello")  # reviewed\n' }]);
    expect(editor.saved).toEqual([uri]); // saved once, before the text was read; the tab then closed cleanly
    expect(proposed.text('/r1-0/ws/src/app.py')).toBeUndefined();
  });

  it('accepts a proposal that was saved and closed before the answer', async () => {
    const { reviews, proposed } = setup();
    const answer = reviews.review(edit);
    proposed.writeFile('/r1-0/ws/src/app.py', new TextEncoder().encode('saved\n'), { create: false, overwrite: true });
    await reviews.accept('r1');
    expect((await answer).files).toEqual([{ path: '/ws/src/app.py', content: 'saved\n' }]);
  });

  it('reviews every file of a multi-file change: new files against empty, deletions as null', async () => {
    const { reviews, editor, store } = setup();
    const answer = reviews.review(patch);
    await settle();
    expect(editor.opened.map((diff) => diff.title)).toEqual([
      'a.txt ↔ toolgate proposal',
      'new.txt (new file) ↔ toolgate proposal',
      'old.txt ↔ deleted by toolgate proposal',
    ]);
    expect(reviewCard(store).files.map((file) => file.change)).toEqual(['modify', 'create', 'delete']);
    await reviews.accept('r1');
    expect(await answer).toEqual({
      decision: 'accept',
      files: [
        { path: '/ws/a.txt', content: 'A\n' },
        { path: '/ws/new.txt', content: 'brand new\n' },
        { path: '/ws/old.txt', content: null },
      ],
    });
    expect(editor.closed[0]).toHaveLength(6);
  });

  it('leaves a new file of a multi-file review out when the person rejects that file, and can put it back', async () => {
    const { reviews, editor, store } = setup();
    const decisions = new HunkDecisions(reviews, { replaceText: async () => undefined });
    const answer = reviews.review(patch);
    await settle();
    const created = { scheme: PROPOSED_SCHEME, path: '/r1-1/ws/new.txt' };
    expect(decisions.lenses(created)[0]).toMatchObject({ title: 'Reject this file (do not create it)', command: 'toolgate.review.rejectFile' });
    expect(await decisions.rejectFile(created)).toBe(true);
    expect(decisions.lenses(created)).toEqual([
      { line: 0, title: 'This new file will not be created: Restore the proposal', command: 'toolgate.review.restoreFile' },
      { line: 0, title: 'Decided here; still undecided: old.txt, a.txt. Open old.txt', command: 'toolgate.review.nextFile' },
    ]);
    expect(await decisions.restoreFile(created)).toBe(true);
    expect(decisions.lenses(created).map((lens) => lens.command)).toContain('toolgate.review.acceptHunk');
    await decisions.rejectFile(created);
    await reviews.accept('r1');
    expect(await answer).toEqual({
      decision: 'accept',
      files: [
        { path: '/ws/a.txt', content: 'A\n' },
        { path: '/ws/new.txt', content: null, skipped: true },
        { path: '/ws/old.txt', content: null },
      ],
    });
    expect(reviewCard(store).outcome).toBe('Accepted, without new.txt (not created).');
    // A new file that is the whole review is not left out: that is rejecting the review.
    void reviews.review({ ...edit, files: [{ path: '/ws/only.txt', original: null, proposed: 'x\n' }] });
    expect(await decisions.rejectFile({ scheme: PROPOSED_SCHEME, path: '/r2-0/ws/only.txt' })).toBe(false);
  });

  it('keeps a file a multi-file review would delete when the person rejects that file, and says so', async () => {
    const { reviews, editor, store } = setup();
    const decisions = new HunkDecisions(reviews, { replaceText: async () => undefined });
    const answer = reviews.review(patch);
    await settle();
    const deletion = { scheme: ORIGINAL_SCHEME, path: '/r1-2-deleted/ws/old.txt' };
    expect(editor.opened[2]?.right).toBe(`${deletion.scheme}:${deletion.path}`); // the lenses sit on the deletion's side of its diff
    expect(decisions.lenses(deletion)[0]).toEqual({ line: 0, title: 'Reject this file (keep it, do not delete it)', command: 'toolgate.review.rejectFile' });
    expect(await decisions.rejectFile(deletion)).toBe(true);
    await reviews.accept('r1');
    expect(await answer).toEqual({
      decision: 'accept',
      files: [
        { path: '/ws/a.txt', content: 'A\n' },
        { path: '/ws/new.txt', content: 'brand new\n' },
        { path: '/ws/old.txt', content: null, skipped: true },
      ],
    });
    expect(reviewCard(store).outcome).toBe('Accepted, without old.txt (kept, not deleted).');
    expect(reviewCard(store).files.map((file) => file.leftOut === true)).toEqual([false, false, true]);
    // A deletion that is the whole review is not left out: that is rejecting the review.
    void reviews.review({ ...edit, files: [{ path: '/ws/only.txt', original: 'x\n', proposed: null }] });
    expect(await decisions.rejectFile({ scheme: ORIGINAL_SCHEME, path: '/r2-0-deleted/ws/only.txt' })).toBe(false);
  });

  it('rejects with feedback and leaves nothing behind', async () => {
    const { reviews, proposed, store } = setup();
    const answer = reviews.review(edit);
    await reviews.reject('r1', '  keep the greeting  ');
    await expect(answer).resolves.toEqual({ decision: 'reject', feedback: 'keep the greeting' });
    expect(proposed.text('/r1-0/ws/src/app.py')).toBeUndefined();
    expect(reviewCard(store)).toMatchObject({ state: 'rejected', outcome: 'Rejected, with feedback: keep the greeting' });
  });

  it('sends the notes on lines of a proposal with the decision, and only to that review', async () => {
    const { reviews } = setup();
    const answer = reviews.review(edit);
    const right = { scheme: PROPOSED_SCHEME, path: '/r1-0/ws/src/app.py' };
    expect(reviews.addNote(right, 0, '  say hello to the world  ')).toBe(true);
    expect(reviews.addNote({ scheme: 'file', path: '/ws/src/app.py' }, 0, 'not a proposal')).toBe(false);
    expect(reviews.addNote(right, 0, '   ')).toBe(false);
    await reviews.reject('r1', 'not yet');
    await expect(answer).resolves.toEqual({
      decision: 'reject',
      feedback: 'not yet',
      notes: [{ path: '/ws/src/app.py', line: 1, text: 'say hello to the world' }],
    });
    const next = reviews.review(edit);
    await reviews.accept('r2');
    await expect(next).resolves.not.toHaveProperty('notes');
  });

  it('finds the review from either side of its diff editor, for the editor-title buttons', async () => {
    const { reviews } = setup();
    void reviews.review(edit);
    expect(reviews.reviewFor({ scheme: PROPOSED_SCHEME, path: '/r1-0/ws/src/app.py' })).toBe('r1');
    expect(reviews.reviewFor({ scheme: ORIGINAL_SCHEME, path: '/r1-0/ws/src/app.py' })).toBe('r1');
    expect(reviews.reviewFor({ scheme: 'file', path: '/r1-0/ws/src/app.py' })).toBeUndefined();
    await reviews.accept('r1');
    expect(reviews.reviewFor({ scheme: PROPOSED_SCHEME, path: '/r1-0/ws/src/app.py' })).toBeUndefined();
  });

  it('answers only once', async () => {
    const { reviews, editor } = setup();
    const answer = reviews.review(edit);
    await Promise.all([reviews.accept('r1'), reviews.reject('r1')]);
    expect((await answer).decision).toBe('accept');
    expect(editor.closed).toHaveLength(1);
  });

  it('closes the diff and withdraws the card when the sidecar cancels', async () => {
    const { reviews, editor, store } = setup();
    const token = new FakeCancellation();
    const answer = reviews.review(edit, token);
    token.cancel();
    await expect(answer).resolves.toEqual({ decision: 'reject' });
    expect(editor.closed).toHaveLength(1);
    expect(reviewCard(store).state).toBe('cancelled');
  });

  it('"accept, and accept edits" switches the mode for the call first, then accepts', async () => {
    const { reviews, store, switched } = setup();
    const answer = reviews.review({ ...edit, offersAcceptEdits: true });
    expect(reviewCard(store).offersAcceptEdits).toBe(true);
    await reviews.acceptAndAcceptEdits('r1');
    expect(switched).toEqual([['s1', 'toolu_1']]);
    await expect(answer).resolves.toMatchObject({ decision: 'accept' });
    expect(reviewCard(store)).toMatchObject({ state: 'accepted', outcome: `Accepted as proposed. ${ACCEPT_EDITS_ON}` });
  });

  it('keeps the review open with the reason when the mode cannot be switched', async () => {
    const { reviews, store, editor } = setup(true, 'There is no session s1.');
    const answer = reviews.review({ ...edit, offersAcceptEdits: true });
    await reviews.acceptAndAcceptEdits('r1');
    expect(reviewCard(store)).toMatchObject({ state: 'pending', error: 'The mode was not changed: There is no session s1.' });
    expect(editor.closed).toEqual([]);
    await reviews.reject('r1');
    await expect(answer).resolves.toEqual({ decision: 'reject' });
    expect(reviewCard(store).error).toBe('');
  });

  it('offers "accept edits" in the notification only when the sidecar does', async () => {
    const { reviews, notifier, switched } = setup(false);
    void reviews.review(patch);
    const answer = reviews.review({ ...edit, offersAcceptEdits: true });
    await settle();
    expect(notifier.shown[0]?.actions).toEqual(['Accept', 'Reject', 'Show Diff']);
    expect(notifier.shown[1]?.actions).toEqual(['Accept', 'Accept, Accept Edits', 'Reject', 'Show Diff']);
    notifier.click('Accept, Accept Edits', 1);
    await expect(answer).resolves.toMatchObject({ decision: 'accept' });
    expect(switched).toEqual([['s1', 'toolu_1']]);
  });

  it('offers Accept and Reject in a notification when the chat is hidden', async () => {
    const { reviews, notifier } = setup(false);
    const answer = reviews.review(patch);
    await settle();
    expect(notifier.shown[0]?.message).toContain('a.txt and 2 more');
    notifier.click('Reject');
    await expect(answer).resolves.toEqual({ decision: 'reject' });
  });

  it('gives two proposals for the same path separate documents', async () => {
    const { reviews, editor } = setup();
    void reviews.review(edit);
    void reviews.review(edit);
    await settle();
    expect(new Set(editor.opened.map((diff) => diff.right)).size).toBe(2);
  });

  it('titles diffs by file name and kind of change', () => {
    expect(diffTitle({ path: 'C:\\ws\\x.ts', original: 'a', proposed: 'b' })).toBe('x.ts ↔ toolgate proposal');
  });

  it('shows paths inside the workspace relative to it', () => {
    expect(displayPath('/ws/src/a.py', '/ws')).toBe('src/a.py');
    expect(displayPath('/ws/src/a.py', '/ws/')).toBe('src/a.py');
    expect(displayPath('/wsx/a.py', '/ws')).toBe('/wsx/a.py');
    expect(displayPath('/etc/hosts', undefined)).toBe('/etc/hosts');
  });
});
