// @vitest-environment jsdom
/**
 * The chat's Markdown as the chat draws it (markdown-it with our options, our token walker): what it shows, and what
 * it never lets through. The walker's CommonMark fidelity is commonmark.test.ts's.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';

import { renderMarkdown } from '../../webview/markdown';

/** The rendered nodes in a container, read back as HTML (reading is the test's; the renderer never writes HTML). */
function render(source: string, copy?: (text: string) => void): HTMLDivElement {
  const container = document.createElement('div');
  container.appendChild(renderMarkdown(source, copy));
  return container;
}

const html = (source: string): string => render(source).innerHTML;

const SAFE_HREF = /^(https?:\/\/|mailto:)/i;
const ELEMENTS = new Set(['P', 'H3', 'H4', 'H5', 'H6', 'BLOCKQUOTE', 'UL', 'OL', 'LI', 'PRE', 'CODE', 'EM', 'STRONG', 'DEL', 'A', 'SPAN', 'HR', 'BR', 'DIV', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'BUTTON']);
const ATTRIBUTES = new Set(['href', 'title', 'rel', 'class', 'start', 'tabindex', 'data-lang']);

/** Whatever the input: only our elements and attributes, and links only to addresses we open. */
function expectOnlySafeNodes(container: Element): void {
  for (const element of container.querySelectorAll('*')) {
    expect(ELEMENTS, element.outerHTML).toContain(element.tagName);
    for (const attribute of element.getAttributeNames()) expect(ATTRIBUTES, element.outerHTML).toContain(attribute);
    if (element.tagName === 'A') expect(element.getAttribute('href')).toMatch(SAFE_HREF);
  }
}

afterEach(() => vi.restoreAllMocks());

describe('the chat Markdown keeps out what could run or load', () => {
  const injections = [
    '<script>alert(1)</script> and <img src=x onerror=alert(1)>',
    '<div onclick="alert(1)">\n\n*still html*\n\n</div>',
    '<a href="javascript:alert(1)">raw link</a>',
    '[click](javascript:alert(1))',
    '[click](JaVaScRiPt:alert(1))',
    '[click](&#106;avascript:alert(1))',
    '[click](jav&#x61;script&#58;alert(1))',
    '[click](<javascript:alert(1)>)',
    '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '[click](data:image/png;base64,iVBORw0KGgo=)',
    '[click](vbscript:msgbox(1))',
    '[run](command:workbench.action.terminal.new)',
    '[file](file:///etc/passwd)',
    '[ref][x]\n\n[x]: javascript:alert(1)',
    '<javascript:alert(1)>',
    '![pixel](https://tracker.example/p.png)',
    '![x](javascript:alert(1))',
    '![x](data:image/png;base64,iVBORw0KGgo=)',
    '[x](https://example.com "title\\" onmouseover=\\"alert(1)")',
    '[x](https://example.com/"onmouseover="alert(1))',
    '```js" onload="alert(1)\ncode\n```',
    '| a |\n|---|\n| <b onclick=alert(1)>b</b> |',
    '&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;',
  ];

  it.each(injections)('%s', (source) => {
    const setHtml = vi.spyOn(Element.prototype, 'innerHTML', 'set');
    const insertHtml = vi.spyOn(Element.prototype, 'insertAdjacentHTML');
    const container = render(source);
    expect(setHtml).not.toHaveBeenCalled(); // never an HTML string: only elements and text nodes
    expect(insertHtml).not.toHaveBeenCalled();
    expectOnlySafeNodes(container);
  });

  it('shows raw HTML and entity-made tags as the text the model wrote', () => {
    expect(render('<script>alert(1)</script> and <img src=x onerror=alert(1)>').textContent).toBe(
      '<script>alert(1)</script> and <img src=x onerror=alert(1)>',
    );
    expect(render('&lt;b&gt;not bold&lt;/b&gt;').textContent).toBe('<b>not bold</b>');
    expect(html('&lt;b&gt;not bold&lt;/b&gt;')).toBe('<p>&lt;b&gt;not bold&lt;/b&gt;</p>');
    // Raw HTML is off in the parser itself: a block of it is not even taken as one (the Markdown inside still counts).
    expect(html('<div>\n*inside*\n</div>')).toBe('<p>&lt;div&gt;<br><em>inside</em><br>&lt;/div&gt;</p>');
  });

  it('keeps the text of a link it does not open, and drops the target', () => {
    expect(html('[run](command:workbench.action.terminal.new)')).toBe('<p><span>run</span></p>');
    expect(html('[docs](/relative/path)')).toBe('<p><span>docs</span></p>');
    // markdown-it itself refuses script targets: the brackets stay as text.
    expect(html('[click](javascript:alert(1))')).toBe('<p>[click](javascript:alert(1))</p>');
  });

  it('never loads an image: it becomes a link to it, named by its text', () => {
    expect(html('![a *diagram*](https://example.com/d.png)')).toBe(
      '<p><a href="https://example.com/d.png" title="https://example.com/d.png" rel="noreferrer noopener" class="md-image">a diagram</a></p>',
    );
    expect(html('![x](data:image/png;base64,iVBORw0KGgo=)')).toBe('<p><span>x</span></p>');
  });
});

describe('the chat Markdown draws what the model writes', () => {
  it('links http, https and mailto targets, written out or in angle brackets, but not bare addresses', () => {
    expect(html('[docs](https://example.com/a)')).toBe(
      '<p><a href="https://example.com/a" title="https://example.com/a" rel="noreferrer noopener">docs</a></p>',
    );
    expect(render('<https://example.com>').querySelector('a')?.getAttribute('href')).toBe('https://example.com');
    expect(render('<someone@example.com>').querySelector('a')?.getAttribute('href')).toBe('mailto:someone@example.com');
    expect(html('see https://example.com now')).toBe('<p>see https://example.com now</p>');
  });

  it('draws fenced code with its language, and runs a fence that is not closed yet to the end (streaming)', () => {
    expect(html('```py\nprint(1)\n```\nafter')).toBe(
      '<pre class="md-code" tabindex="0"><code data-lang="py">print(1)\n</code></pre><p>after</p>',
    );
    expect(html('```\nstill <typing>')).toBe('<pre class="md-code" tabindex="0"><code>still &lt;typing&gt;</code></pre>');
    expect(html('Before\n\n```ts\nconst a = 1;\n\nconst b')).toBe(
      '<p>Before</p><pre class="md-code" tabindex="0"><code data-lang="ts">const a = 1;\n\nconst b</code></pre>',
    );
  });

  it('shows half-written markup while it streams as text, and never throws on odd input', () => {
    expect(html('Here is **bol')).toBe('<p>Here is **bol</p>');
    expect(html('[docs](https://exa')).toBe('<p>[docs](https://exa</p>');
    const odd = ['', '\n\n', '#', '>', '- ', '1.', '|', '```', '***', '[', '[a](', '**', '`', '\\', '>'.repeat(5000), '*'.repeat(5000), '- '.repeat(2000)];
    for (const source of odd) expect(() => render(source)).not.toThrow();
  });

  it('gives a code block a Copy button that copies its text', () => {
    const copied: string[] = [];
    const container = render('```sh\nmake test\n```', (text) => copied.push(text));
    container.querySelector<HTMLButtonElement>('.md-code-block button.copy')?.click();
    expect(copied).toEqual(['make test']);
  });

  it('draws emphasis, strong, strikethrough and code spans without touching snake_case, and a newline as a break', () => {
    expect(html('**bold** and *it* and ~~gone~~ and `a*b*c` and my_var_name')).toBe(
      '<p><strong>bold</strong> and <em>it</em> and <del>gone</del> and <code>a*b*c</code> and my_var_name</p>',
    );
    expect(html('2 * 3 * 4')).toBe('<p>2 * 3 * 4</p>');
    expect(html('\\*not em\\*')).toBe('<p>*not em*</p>');
    expect(html('one\ntwo')).toBe('<p>one<br>two</p>');
  });

  it('draws headings two levels smaller, quotes, rules and nested lists', () => {
    expect(html('# Title\n## Plan\n\n> note\n\n3. first\n   - nested\n4. second\n\n---')).toBe(
      '<h3 class="md-heading">Title</h3><h4 class="md-heading">Plan</h4><blockquote><p>note</p></blockquote>' +
        '<ol start="3"><li>first<ul><li>nested</li></ul></li><li>second</li></ol><hr>',
    );
  });

  it('draws pipe tables with their alignment as classes', () => {
    expect(html('| file | lines |\n|:--|--:|\n| a.py | 10 |\n| b\\|c | 2 |')).toBe(
      '<div class="md-table"><table><thead><tr><th class="align-left">file</th><th class="align-right">lines</th></tr></thead>' +
        '<tbody><tr><td class="align-left">a.py</td><td class="align-right">10</td></tr>' +
        '<tr><td class="align-left">b|c</td><td class="align-right">2</td></tr></tbody></table></div>',
    );
  });
});
