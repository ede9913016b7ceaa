import { describe, expect, it } from 'vitest';

import { parseInline, parseMarkdown } from '../src/shared/markdown';

describe('markdown', () => {
  it('keeps raw HTML as text', () => {
    const blocks = parseMarkdown('<script>alert(1)</script> and <img src=x onerror=alert(1)>');
    expect(blocks).toEqual([
      { t: 'p', c: [{ t: 'text', v: '<script>alert(1)</script> and <img src=x onerror=alert(1)>' }] },
    ]);
  });

  it('links only http, https and mailto targets', () => {
    expect(parseInline('[docs](https://example.com/a)')).toEqual([
      { t: 'link', href: 'https://example.com/a', c: [{ t: 'text', v: 'docs' }] },
    ]);
    expect(parseInline('[click](javascript:alert(1))')).toEqual([
      { t: 'span', c: [{ t: 'text', v: 'click' }] },
      { t: 'text', v: ')' },
    ]);
    expect(parseInline('[run](command:workbench.action.terminal.new)')).toEqual([
      { t: 'span', c: [{ t: 'text', v: 'run' }] },
    ]);
    expect(parseInline('<https://example.com>')[0]).toMatchObject({ t: 'link', href: 'https://example.com' });
  });

  it('parses fenced code, and runs an unclosed fence to the end while streaming', () => {
    expect(parseMarkdown('```py\nprint(1)\n```\nafter')).toEqual([
      { t: 'pre', lang: 'py', v: 'print(1)' },
      { t: 'p', c: [{ t: 'text', v: 'after' }] },
    ]);
    expect(parseMarkdown('```\nstill <typing>')).toEqual([{ t: 'pre', lang: '', v: 'still <typing>' }]);
  });

  it('parses emphasis, strong, strikethrough and code spans without touching snake_case', () => {
    expect(parseInline('**bold** and *it* and ~~gone~~ and `a*b*c` and my_var_name')).toEqual([
      { t: 'strong', c: [{ t: 'text', v: 'bold' }] },
      { t: 'text', v: ' and ' },
      { t: 'em', c: [{ t: 'text', v: 'it' }] },
      { t: 'text', v: ' and ' },
      { t: 'del', c: [{ t: 'text', v: 'gone' }] },
      { t: 'text', v: ' and ' },
      { t: 'code', v: 'a*b*c' },
      { t: 'text', v: ' and my_var_name' },
    ]);
    expect(parseInline('2 * 3 * 4')).toEqual([{ t: 'text', v: '2 * 3 * 4' }]);
    expect(parseInline('\\*not em\\*')).toEqual([{ t: 'text', v: '*not em*' }]);
  });

  it('parses headings, quotes, rules and nested lists', () => {
    const blocks = parseMarkdown('## Plan\n\n> note\n\n1. first\n   - nested\n2. second\n\n---');
    expect(blocks).toEqual([
      { t: 'h', level: 2, c: [{ t: 'text', v: 'Plan' }] },
      { t: 'quote', c: [{ t: 'p', c: [{ t: 'text', v: 'note' }] }] },
      {
        t: 'list',
        ordered: true,
        start: 1,
        items: [
          [
            { t: 'p', c: [{ t: 'text', v: 'first' }] },
            { t: 'list', ordered: false, start: 1, items: [[{ t: 'p', c: [{ t: 'text', v: 'nested' }] }]] },
          ],
          [{ t: 'p', c: [{ t: 'text', v: 'second' }] }],
        ],
      },
      { t: 'hr' },
    ]);
  });

  it('parses pipe tables with alignment', () => {
    const [table] = parseMarkdown('| file | lines |\n|:--|--:|\n| a.py | 10 |\n| b\\|c | 2 |');
    expect(table).toMatchObject({
      t: 'table',
      align: ['left', 'right'],
      head: [[{ t: 'text', v: 'file' }], [{ t: 'text', v: 'lines' }]],
      rows: [
        [[{ t: 'text', v: 'a.py' }], [{ t: 'text', v: '10' }]],
        [[{ t: 'text', v: 'b|c' }], [{ t: 'text', v: '2' }]],
      ],
    });
  });

  it('never loops or throws on odd input', () => {
    for (const input of ['', '\n\n', '#', '>', '- ', '1.', '|', '```', '***', '[', '[a](', '**', '`', '\\']) {
      expect(() => parseMarkdown(input)).not.toThrow();
    }
  });
});
