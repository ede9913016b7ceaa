/** What a finished call's card shows a person, read back from what the model got (shared/toolResultView.ts). */

import { describe, expect, it } from 'vitest';

import type { Item } from '../src/shared/chatModel';
import { modelName } from '../src/shared/headerView';
import { changeView, lineDiff, patchLines, readView, resultView, searchView, todosFinished, todosView } from '../src/shared/toolResultView';
import { transcriptEntries } from '../src/shared/transcript';

describe('readView', () => {
  it('reads the numbered lines back into the file, without their number prefix', () => {
    const view = readView('src/x.py (lines 9–11)', '9\tdef f():\n10\t    return 1\t# tab kept\n11\t');
    expect(view?.headline).toBe('3 lines of src/x.py');
    expect(view?.lines).toEqual([
      { number: 9, text: 'def f():' },
      { number: 10, text: '    return 1\t# tab kept' },
      { number: 11, text: '' },
    ]);
    expect(view?.notes).toEqual([]);
  });

  it('says "1 line", and keeps what is not a numbered line as a note', () => {
    const view = readView('a.txt', '1\tonly\n\n[The file has 900 more lines.]');
    expect(view?.headline).toBe('1 line of a.txt');
    expect(view?.notes).toEqual(['[The file has 900 more lines.]']);
  });

  it('has nothing to show for a result without numbered lines (an empty file, an error)', () => {
    expect(readView('a.txt', '(The file a.txt exists but is empty.)')).toBeNull();
  });
});

describe('lineDiff and changeView', () => {
  it('shows an Edit as removed and added lines around the lines both share', () => {
    expect(lineDiff('a\nb\nc\nd', 'a\nB\nc\nd\ne')).toEqual([
      { kind: 'context', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'added', text: 'B' },
      { kind: 'context', text: 'c' },
      { kind: 'context', text: 'd' },
      { kind: 'added', text: 'e' },
    ]);
  });

  it('keeps the lines two changes share between them', () => {
    const kinds = lineDiff('x\n1\n2\n3\ny', 'X\n1\n2\n3\nY').map((line) => `${line.kind[0]}${line.text}`);
    expect(kinds).toEqual(['rx', 'aX', 'c1', 'c2', 'c3', 'ry', 'aY']);
  });

  it('counts what an Edit adds and removes, from its input', () => {
    const view = changeView('Edit', { file_path: '/w/a.py', old_string: 'x = 1\n', new_string: 'x = 2\ny = 3\n' });
    expect(view?.stat).toBe('+2 −1');
  });

  it('shows a Write as the lines it writes, and an ApplyPatch by its own markers', () => {
    expect(changeView('Write', { file_path: 'n.txt', content: 'one\ntwo\n' })?.lines).toEqual([
      { kind: 'added', text: 'one' },
      { kind: 'added', text: 'two' },
    ]);
    expect(patchLines('*** Begin Patch\n*** Update File: a.py\n@@ def f\n-old\n+new\n keep\n*** End Patch')).toEqual([
      { kind: 'file', text: '*** Begin Patch' },
      { kind: 'file', text: '*** Update File: a.py' },
      { kind: 'hunk', text: '@@ def f' },
      { kind: 'removed', text: 'old' },
      { kind: 'added', text: 'new' },
      { kind: 'context', text: 'keep' },
      { kind: 'file', text: '*** End Patch' },
    ]);
  });

  it('has no view of an input it cannot read', () => {
    expect(changeView('Edit', { file_path: 'a' })).toBeNull();
    expect(changeView('Bash', { command: 'ls' })).toBeNull();
  });
});

describe('searchView', () => {
  it('groups Grep content lines by file, with how many matched in each', () => {
    const view = searchView('Grep', 'src/a.py:3:def f():\nsrc/a.py:9:def g():\nsrc/b-1.py:1:def h():');
    expect(view?.stat).toBe('3 matches in 2 files');
    expect(view?.groups).toEqual([
      { path: 'src/a.py', count: 2, lines: ['3: def f():', '9: def g():'] },
      { path: 'src/b-1.py', count: 1, lines: ['1: def h():'] },
    ]);
  });

  it('shows context lines without counting them', () => {
    const view = searchView('Grep', 'a.py-2-before\na.py:3:hit\na.py-4-after\n--\nb.py:7:hit');
    expect(view?.stat).toBe('2 matches in 2 files');
    expect(view?.groups[0]?.lines).toEqual(['2- before', '3: hit', '4- after']);
  });

  it('lists the files of a files-only search and of a Glob, the header and notes apart', () => {
    const grep = searchView('Grep', 'Found 2 files, newest first\nsrc/a.py\nsrc/b.py\n\n[Stopped early: too many.]');
    expect(grep?.stat).toBe('2 files');
    expect(grep?.groups.map((group) => group.path)).toEqual(['src/a.py', 'src/b.py']);
    expect(grep?.notes).toEqual(['Found 2 files, newest first', '[Stopped early: too many.]']);
    expect(searchView('Glob', 'one.ts')?.stat).toBe('1 file');
  });

  it('adds up a count search', () => {
    const view = searchView('Grep', 'a.py:4\nb.py:1\n5 matching lines in 2 files.');
    expect(view?.stat).toBe('5 matches in 2 files');
    expect(view?.notes).toEqual(['5 matching lines in 2 files.']);
  });

  it('has no view when nothing matched (the result says so in words)', () => {
    expect(searchView('Glob', 'No files match *.rs in src. (src is a directory: …)')).toBeNull();
    expect(searchView('Grep', "No matches for 'x' in src.\n\n[Some files could not be read.]")).toBeNull();
    expect(searchView('Grep', '')).toBeNull();
    expect(resultView({ toolName: 'Glob', summary: '*.rs', status: 'error', result: 'a.rs' })).toBeNull(); // a failure
  });
});

describe('todos', () => {
  it('reads the list TodoWrite set, and knows when it is finished', () => {
    const todos = [
      { id: '1', content: 'Read', status: 'completed' },
      { id: '2', content: 'Fix', status: 'in_progress' },
    ];
    expect(todosView({ todos })?.headline).toBe('1 of 2 done');
    expect(todosFinished(todos)).toBe(false);
    expect(todosFinished(todos.map((todo) => ({ ...todo, status: 'completed' })))).toBe(true);
    expect(todosFinished([])).toBe(false);
  });
});

describe('modelName', () => {
  it('names a model as a person would', () => {
    expect(modelName('claude-sonnet-4-5-20250929')).toBe('Claude Sonnet 4.5');
    expect(modelName('claude-3-5-haiku-latest')).toBe('Claude 3.5 Haiku');
    expect(modelName('claude-opus-4-20250514')).toBe('Claude Opus 4');
    expect(modelName('llama3.1:8b')).toBe('llama3.1:8b');
  });
});

describe('transcriptEntries', () => {
  const tool = (id: string): Item => ({
    kind: 'tool', id, toolName: 'Bash', summary: 'ls', status: 'done', startedAt: 1, finishedAt: 2, waitedMs: 0,
    waitingSince: null, output: '', outputTrimmed: false, resultSummary: '', result: '',
  }); // prettier-ignore
  const approval = (id: string, toolUseId: string, state: 'pending' | 'allowed'): Item => ({
    kind: 'approval', id, card: { toolUseId, toolName: 'Bash', summary: 'ls', reason: '' }, state, outcome: 'Allowed once.',
    draft: null, error: '',
  }); // prettier-ignore

  it('draws an answered approval inside its tool card, and a waiting one as its own card', () => {
    const items = [tool('t1'), tool('t2'), approval('a1', 't1', 'allowed'), approval('a2', 't2', 'pending')];
    const entries = transcriptEntries(items);
    expect(entries.map((entry) => [entry.item.id, entry.answered?.id])).toEqual([
      ['t1', 'a1'],
      ['t2', undefined],
      ['a2', undefined],
    ]);
  });

  it('keeps an answered approval whose tool card is not there as a card', () => {
    expect(transcriptEntries([approval('a1', 'gone', 'allowed')]).map((entry) => entry.item.id)).toEqual(['a1']);
  });
});
