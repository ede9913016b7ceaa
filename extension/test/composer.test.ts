import { describe, expect, it } from 'vitest';

import type { CompletionItem } from '../src/shared/composer';
import {
  applyChoice,
  attachmentLabel,
  findTrigger,
  isTypedOut,
  listKey,
  moveSelection,
  parseSlash,
  rankCandidates,
  slashCompletions,
} from '../src/shared/composer';
import { parseAttachments } from '../src/shared/composerMessages';
import { parseViewMessage } from '../src/shared/messages';

const none = { shift: false, alt: false, ctrl: false, meta: false };

function files(...labels: string[]): CompletionItem[] {
  return labels.map((label) => ({ kind: 'file', label, detail: '' }));
}

describe('where a completion starts', () => {
  it('finds @ after a space or at the start, and / only as the first word', () => {
    expect(findTrigger('look at @src/ap', 15)).toEqual({ char: '@', query: 'src/ap', start: 8 });
    expect(findTrigger('@', 1)).toEqual({ char: '@', query: '', start: 0 });
    expect(findTrigger('/mo', 3)).toEqual({ char: '/', query: 'mo', start: 0 });
    expect(findTrigger('mail me@example.com', 19)).toBeUndefined(); // an address is not a mention
    expect(findTrigger('/model x', 8)).toBeUndefined(); // past the command's name: its argument
    expect(findTrigger('see /mo', 7)).toBeUndefined();
    expect(findTrigger('@src done', 9)).toBeUndefined(); // the caret left the mention
    expect(findTrigger('@src done', 4)).toEqual({ char: '@', query: 'src', start: 0 });
  });
});

describe('ranking candidates', () => {
  it('puts a name match first, then a path start, then contiguous, then scattered; others are dropped', () => {
    const ranked = rankCandidates(files('lib/xapp.ts', 'src/app.ts', 'app/main.ts', 'a/b/p/p.ts', 'readme.md'), 'app');
    expect(ranked.map((item) => item.label)).toEqual(['src/app.ts', 'app/main.ts', 'lib/xapp.ts', 'a/b/p/p.ts']);
  });

  it('is case-insensitive, keeps the given order among equals, and caps the list', () => {
    expect(rankCandidates(files('B.ts', 'b.ts'), 'b').map((item) => item.label)).toEqual(['B.ts', 'b.ts']);
    expect(rankCandidates(files(...Array.from({ length: 80 }, (_, n) => `f${n}.ts`)), '', 50)).toHaveLength(50);
  });

  it('completes the slash commands by name', () => {
    expect(rankCandidates(slashCompletions(), 'co').map((item) => item.label)).toEqual(['/compact']);
    expect(slashCompletions().map((item) => item.label)).toEqual(['/model', '/compact', '/clear', '/rewind', '/rules', '/mcp', '/help']);
  });
});

describe('the keyboard in an open list', () => {
  it('moves with the arrows (wrapping), chooses with Enter or Tab, closes with Escape', () => {
    expect(listKey('ArrowDown', none)).toBe('next');
    expect(listKey('ArrowUp', none)).toBe('previous');
    expect(listKey('Enter', none)).toBe('accept');
    expect(listKey('Tab', none)).toBe('accept');
    expect(listKey('Escape', none)).toBe('close');
    expect(listKey('Enter', { ...none, shift: true })).toBeUndefined(); // a new line, as usual
    expect(listKey('ArrowDown', { ...none, alt: true })).toBeUndefined();
    expect(listKey('a', none)).toBeUndefined();
    expect(moveSelection(2, 3, 'next')).toBe(0);
    expect(moveSelection(0, 3, 'previous')).toBe(2);
  });

  it('replaces the trigger and its query with the choice', () => {
    const text = 'fix @ap please';
    const trigger = findTrigger(text, 7)!;
    const chosen = applyChoice(text, 7, trigger, { kind: 'file', label: 'src/app.ts', detail: '' });
    expect(chosen).toEqual({ text: 'fix @src/app.ts please', caret: 16 });
    const command = applyChoice('/mo', 3, findTrigger('/mo', 3)!, { kind: 'command', label: '/model', detail: '' });
    expect(command).toEqual({ text: '/model ', caret: 7 });
  });
});

describe('slash commands', () => {
  it('lets Enter send a command typed out in full, and complete one typed in part', () => {
    const [model] = slashCompletions();
    expect(isTypedOut(findTrigger('/model', 6)!, model)).toBe(true);
    expect(isTypedOut(findTrigger('/mo', 3)!, model)).toBe(false);
    expect(isTypedOut(findTrigger('@model', 6)!, { kind: 'file', label: 'model', detail: '' })).toBe(false);
  });

  it('parses a known command and its argument; anything else is a message', () => {
    expect(parseSlash('/model claude-opus-4')).toEqual({ name: 'model', argument: 'claude-opus-4' });
    expect(parseSlash(' /compact keep the API notes \n')).toEqual({ name: 'compact', argument: 'keep the API notes' });
    expect(parseSlash('/help')).toEqual({ name: 'help', argument: '' });
    expect(parseSlash('/usr/bin is missing')).toBeUndefined();
    expect(parseSlash('please /clear')).toBeUndefined();
  });
});

describe('attachments from the webview', () => {
  it('accepts well-formed ones and carries them with the message', () => {
    const attachments = [
      { kind: 'selection', path: '/w/a.ts', startLine: 2, endLine: 4, label: null },
      { kind: 'problems' },
      { kind: 'problems', path: '/w/src' },
    ];
    expect(parseViewMessage({ type: 'send', text: 'hi', attachments })).toEqual({ type: 'send', text: 'hi', attachments });
  });

  it('refuses the message when one is malformed', () => {
    for (const bad of [
      [{ kind: 'file' }],
      [{ kind: 'selection', path: '/w/a.ts', startLine: 4, endLine: 2 }],
      [{ kind: 'disk', path: '/' }],
      [{ kind: 'problems', path: 42 }],
      Array.from({ length: 51 }, () => ({ kind: 'file', path: '/w/a.ts' })),
      'not a list',
    ]) {
      expect(parseAttachments(bad)).toBeUndefined();
      expect(parseViewMessage({ type: 'send', text: 'hi', attachments: bad })).toBeUndefined();
    }
  });

  it('labels chips by path and lines', () => {
    expect(attachmentLabel({ kind: 'selection', path: '/w/a.ts', startLine: 3, endLine: 9 }, 'a.ts')).toBe('a.ts:3-9');
    expect(attachmentLabel({ kind: 'selection', path: '/w/a.ts', startLine: 3, endLine: 3, label: 'main' }, 'a.ts')).toBe('main:3');
    expect(attachmentLabel({ kind: 'problems' }, '')).toBe('Problems');
    expect(attachmentLabel({ kind: 'problems', path: '/w/src' }, 'src')).toBe('Problems in src');
  });
});
