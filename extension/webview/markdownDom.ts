/** Turns the Markdown tree (src/shared/markdown.ts) into DOM nodes. Only text nodes carry the model's words. */

import type { Block, Inline } from '../src/shared/markdown';
import { parseMarkdown } from '../src/shared/markdown';
import { h } from './dom';

/** `copy`: what a code block's Copy button does with the block's text (none: no button). */
export function renderMarkdown(source: string, copy?: (text: string) => void): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const block of parseMarkdown(source)) fragment.appendChild(renderBlock(block, copy));
  return fragment;
}

function renderBlock(block: Block, copy?: (text: string) => void): Node {
  switch (block.t) {
    case 'p':
      return h('p', {}, renderInlines(block.c));
    case 'h':
      // Headings inside a chat message are kept small: h1 in a reply is not the page's title.
      return h(`h${Math.min(6, block.level + 2)}` as 'h3', { class: 'md-heading' }, renderInlines(block.c));
    case 'pre': {
      const code = h('code', block.lang ? { 'data-lang': block.lang } : {}, block.v);
      const pre = h('pre', { class: 'md-code', tabindex: '0' }, code);
      if (!copy) return pre;
      const button = h('button', { class: 'icon copy', title: 'Copy this code to the clipboard' }, 'Copy');
      button.addEventListener('click', () => {
        copy(block.v);
        button.textContent = 'Copied';
        setTimeout(() => (button.textContent = 'Copy'), 1500);
      });
      return h('div', { class: 'md-code-block' }, button, pre);
    }
    case 'quote':
      return h('blockquote', {}, block.c.map((child) => renderBlock(child, copy)));
    case 'list': {
      const items = block.items.map((item) => h('li', {}, item.map((child) => renderBlock(child, copy))));
      return block.ordered && block.start !== 1
        ? h('ol', { start: block.start }, items)
        : h(block.ordered ? 'ol' : 'ul', {}, items);
    }
    case 'hr':
      return h('hr');
    case 'table':
      return h(
        'div',
        { class: 'md-table' },
        h(
          'table',
          {},
          h('thead', {}, h('tr', {}, block.head.map((cell, i) => h('th', alignment(block.align[i]), renderInlines(cell))))),
          h(
            'tbody',
            {},
            block.rows.map((row) => h('tr', {}, row.map((cell, i) => h('td', alignment(block.align[i]), renderInlines(cell))))),
          ),
        ),
      );
  }
}

function alignment(align: string | null | undefined): { class?: string } {
  return align ? { class: `align-${align}` } : {};
}

function renderInlines(inlines: Inline[]): Node[] {
  return inlines.map(renderInline);
}

function renderInline(inline: Inline): Node {
  switch (inline.t) {
    case 'text':
      return document.createTextNode(inline.v);
    case 'code':
      return h('code', {}, inline.v);
    case 'strong':
      return h('strong', {}, renderInlines(inline.c));
    case 'em':
      return h('em', {}, renderInlines(inline.c));
    case 'del':
      return h('del', {}, renderInlines(inline.c));
    case 'span':
      return h('span', {}, renderInlines(inline.c));
    case 'br':
      return h('br');
    case 'link':
      // Only http(s) and mailto reach here (the parser drops other targets); VS Code opens them outside the webview.
      return h('a', { href: inline.href, title: inline.href, rel: 'noreferrer noopener' }, renderInlines(inline.c));
  }
}
