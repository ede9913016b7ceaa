// @vitest-environment jsdom
/**
 * Tool cards as a person reads them: a Read's lines without the model's number prefixes, a change as a coloured
 * diff, a search as files with counts; the model's text kept word for word; text never read as markup; reasons'
 * backticks drawn as code; an answered approval drawn in its tool card.
 */

import { describe, expect, it } from 'vitest';

import type { ApprovalCard, ChatAction, Item } from '../../src/shared/chatModel';
import { initialState, reduce } from '../../src/shared/chatModel';
import type { ChatEvent } from '../../src/protocol';
import { transcriptEntries } from '../../src/shared/transcript';
import { renderItem } from '../../webview/components';
import type { RenderContext } from '../../webview/components';
import { tokenize, languageOf } from '../../webview/highlight';

const context: RenderContext = { post: () => undefined, now: () => 0, openTools: new Set(), decided: () => undefined };

function stateAfter(actions: ChatAction[]): Item[] {
  const start = initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default');
  return actions.reduce(reduce, start).items;
}

const event = (value: ChatEvent): ChatAction => ({ type: 'event', at: 1000, event: value });

/** A finished call, as the sidecar reports it, drawn as its card (with its answered approval, if any). */
function finishedCard(name: string, input: unknown, summary: string, result: string, extra: ChatAction[] = []): HTMLElement {
  const items = stateAfter([
    event({ type: 'tool_call_started', tool_use_id: 't1', name, input, summary }),
    ...extra,
    event({
      type: 'tool_call_finished',
      tool_use_id: 't1',
      name,
      is_error: false,
      summary: result.split('\n')[0] ?? '',
      result: { type: 'tool_result', tool_use_id: 't1', content: result, is_error: false },
    }),
  ]);
  const entries = transcriptEntries(items);
  const entry = entries.find((candidate) => candidate.item.kind === 'tool');
  if (!entry) throw new Error('no tool card');
  return renderItem(entry.item, context, entry.answered);
}

describe('a Read card', () => {
  const result = '1\timport os\n2\tx = "a < b & c"  # note\n3\t';
  const card = finishedCard('Read', { file_path: '/w/src/x.py' }, 'src/x.py', result);

  it('says how many lines of which file, in its one line', () => {
    expect(card.querySelector('summary')?.textContent).toContain('Read3 lines of src/x.py');
  });

  it('shows the file lines without the number-and-tab prefix sent to the model, numbers apart', () => {
    const lines = [...card.querySelectorAll('.code-line')];
    expect(lines.map((line) => line.querySelector('.line-number')?.textContent)).toEqual(['1', '2', '3']);
    const texts = lines.map((line) => [...line.childNodes].slice(1).map((node) => node.textContent).join(''));
    expect(texts).toEqual(['import os', 'x = "a < b & c"  # note', '']);
    expect(card.querySelector('.code-lines')?.textContent).not.toContain('\t');
  });

  it('highlights the code by the file type', () => {
    expect(card.querySelector('.code-line .tok-keyword')?.textContent).toBe('import');
    expect(card.querySelector('.code-line .tok-string')?.textContent).toBe('"a < b & c"');
    expect(card.querySelector('.code-line .tok-comment')?.textContent).toBe('# note');
  });

  it('keeps the text the model got, exactly, behind "As the model sees it"', () => {
    expect(card.querySelector('.model-text summary')?.textContent).toBe('As the model sees it');
    expect(card.querySelector('.model-text pre.tool-result')?.textContent).toBe(result);
  });
});

describe('a change card', () => {
  it('draws an Edit as coloured lines, not a diff fence', () => {
    const card = finishedCard(
      'Edit',
      { file_path: '/w/a.py', old_string: 'x = 1\ny = 2', new_string: 'x = 1\ny = 3' },
      'a.py',
      'Edited a.py (line 2).',
    );
    expect(card.querySelector('.tool-stat')?.textContent).toBe('+1 −1');
    const lines = [...card.querySelectorAll('.diff-line')].map((line) => [line.className, line.lastChild?.textContent]);
    expect(lines).toEqual([
      ['diff-line diff-context', 'x = 1'],
      ['diff-line diff-removed', 'y = 2'],
      ['diff-line diff-added', 'y = 3'],
    ]);
    expect(card.textContent).not.toContain('```');
    expect(card.querySelector('.tool-result-summary')?.textContent).toBe('Edited a.py (line 2).');
  });
});

describe('a search card', () => {
  it('lists the files with their match counts, each opening to its lines', () => {
    const card = finishedCard('Grep', { pattern: 'def' }, "'def'", 'a.py:1:def f():\na.py:5:def g():\nb.py:2:def h():');
    expect(card.querySelector('.tool-stat')?.textContent).toBe('3 matches in 2 files');
    const files = [...card.querySelectorAll('.search-files > li')].map((li) => [
      li.querySelector('.search-path')?.textContent,
      li.querySelector('.search-count')?.textContent,
    ]);
    expect(files).toEqual([
      ['a.py', '2'],
      ['b.py', '1'],
    ]);
    expect(card.querySelector('.search-lines')?.textContent).toBe('1: def f():\n5: def g():');
  });
});

describe('a long command', () => {
  it('is shown whole, as a wrapped code block, in the card', () => {
    const command = 'pytest -q tests/unit/test_a.py tests/unit/test_b.py --maxfail=1 && echo "<done> & ok"';
    const card = finishedCard('Bash', { command }, command, 'ok');
    expect(card.querySelector('pre.tool-command code')?.textContent).toBe(command);
    expect(finishedCard('Bash', { command: 'ls' }, 'ls', 'ok').querySelector('.tool-command')).toBeNull();
  });
});

describe('text is drawn once, as text', () => {
  const card: ApprovalCard = {
    toolUseId: 't1',
    toolName: 'Bash',
    summary: 'grep -c "<a href" index.html && echo 1 &amp; 2',
    reason: '`grep -c "<a href" index.html` is not read-only, and no rule allows `echo`',
  };

  it('shows a summary with <, & and an entity exactly as sent (no second escaping)', () => {
    const [item] = stateAfter([{ type: 'approvalRequested', id: 'a1', card }]);
    const element = renderItem(item as Item, context);
    expect(element.querySelector('.card-summary code')?.textContent).toBe(card.summary);
    expect(element.querySelector('.card-summary code')?.children).toHaveLength(0);
  });

  it("draws a reason's backticked spans as code, without the backticks", () => {
    const [item] = stateAfter([{ type: 'approvalRequested', id: 'a1', card }]);
    const reason = renderItem(item as Item, context).querySelector('.card-reason');
    expect([...(reason?.querySelectorAll('code') ?? [])].map((code) => code.textContent)).toEqual(['grep -c "<a href" index.html', 'echo']);
    expect(reason?.textContent).toBe('Why you are asked: grep -c "<a href" index.html is not read-only, and no rule allows echo');
  });

  it('draws an answered approval as a line of its tool card, its reason in the tooltip without backticks', () => {
    const element = finishedCard('Bash', { command: 'ls' }, 'ls', 'a.txt', [
      { type: 'approvalRequested', id: 'a1', card: { ...card, toolUseId: 't1' } },
      { type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.' },
    ]);
    const answer = element.querySelector('summary .tool-answer.approval-allowed');
    expect(answer?.textContent).toBe('Allowed once.');
    expect(answer?.getAttribute('title')).toBe('Why you were asked: grep -c "<a href" index.html is not read-only, and no rule allows echo');
  });
});

describe('the highlighter', () => {
  it('gives back the line exactly, in tokens', () => {
    const line = "const s = 'it\\'s' + 42; // done";
    const tokens = tokenize(line, languageOf('a.ts'));
    expect(tokens.map((token) => token.text).join('')).toBe(line);
    expect(tokens.filter((token) => token.kind !== 'plain').map((token) => `${token.kind}:${token.text}`)).toEqual([
      'keyword:const',
      "string:'it\\'s'",
      'number:42',
      'comment:// done',
    ]);
    expect(tokenize(line, languageOf('notes.unknown'))).toEqual([{ kind: 'plain', text: line }]);
  });
});
