/**
 * The model's Markdown as DOM nodes. markdown-it (VS Code's own Markdown engine) parses it; this module walks the
 * token stream and builds each element with createElement and each piece of text as a text node. There is never an
 * HTML string: markdown-it's HTML renderer is not used, and raw HTML in the source is off (it arrives as text).
 *
 * - Links open only for http, https and mailto targets (VS Code opens them outside the webview); any other target
 *   keeps its text and loses the link. Bare URLs are not linked (no linkify), as before.
 * - Images are never loaded: an image becomes a link to its address (when that is a link we open), named by its
 *   alternative text.
 * - A code fence that is not closed yet (a reply still streaming) runs to the end of the message (CommonMark's rule).
 * - No token attribute is copied as it stands: only a checked href, a list's start number and a table cell's
 *   alignment (as a class) are taken over.
 */

import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';

import { h } from './dom';

/** Tables and strikethrough on (markdown-it's default preset); raw HTML off; a single newline is a line break. */
const chatMarkdown = new MarkdownIt('default', { html: false, linkify: false, breaks: true, typographer: false });

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

export interface RenderOptions {
  /** A soft line break (one newline inside a paragraph) is shown as a line break; otherwise it is a space. */
  breaks: boolean;
  /** What a code block's Copy button does with the block's text (none: no button). */
  copy?: (text: string) => void;
}

/** A chat reply's Markdown as DOM nodes; `copy`: what a code block's Copy button does with its text. */
export function renderMarkdown(source: string, copy?: (text: string) => void): DocumentFragment {
  return renderTokens(chatMarkdown.parse(source, {}), { breaks: true, copy });
}

/** A markdown-it token stream as DOM nodes. */
export function renderTokens(tokens: readonly Token[], options: RenderOptions): DocumentFragment {
  const fragment = document.createDocumentFragment();
  renderInto(fragment, tokens, options);
  return fragment;
}

/**
 * Walk a flat token stream (markdown-it nests by `nesting`: 1 opens, -1 closes, 0 stands alone) with a stack of open
 * elements, so that deeply nested input cannot exhaust the call stack; an inline token's children are one more walk.
 */
function renderInto(root: Node, tokens: readonly Token[], options: RenderOptions): void {
  const open: Node[] = [root];
  const current = (): Node => open[open.length - 1] ?? root;
  for (const token of tokens) {
    // A tight list's paragraphs are hidden: their text goes straight into the list item.
    if (token.hidden) continue;
    if (token.nesting === 1) {
      const { outer, inner } = openElement(token);
      current().appendChild(outer);
      open.push(inner);
    } else if (token.nesting === -1) {
      if (open.length > 1) open.pop();
    } else if (token.type === 'inline') {
      renderInto(current(), token.children ?? [], options);
    } else {
      const node = leaf(token, options);
      if (node) current().appendChild(node);
    }
  }
}

/** The element an opening token starts (`outer`, in its parent) and the one its children go into (`inner`). */
function openElement(token: Token): { outer: Node; inner: Node } {
  const same = (element: Node): { outer: Node; inner: Node } => ({ outer: element, inner: element });
  switch (token.type) {
    case 'paragraph_open':
      return same(h('p'));
    case 'heading_open':
      // Headings inside a chat message are kept small: h1 in a reply is not the page's title.
      return same(h(`h${Math.min(6, headingLevel(token) + 2)}` as 'h3', { class: 'md-heading' }));
    case 'blockquote_open':
      return same(h('blockquote'));
    case 'bullet_list_open':
      return same(h('ul'));
    case 'ordered_list_open': {
      const start = Number.parseInt(token.attrGet('start') ?? '1', 10);
      return same(h('ol', Number.isSafeInteger(start) && start !== 1 ? { start } : {}));
    }
    case 'list_item_open':
      return same(h('li'));
    case 'table_open': {
      const table = h('table');
      return { outer: h('div', { class: 'md-table' }, table), inner: table };
    }
    case 'thead_open':
      return same(h('thead'));
    case 'tbody_open':
      return same(h('tbody'));
    case 'tr_open':
      return same(h('tr'));
    case 'th_open':
    case 'td_open':
      return same(h(token.type === 'th_open' ? 'th' : 'td', alignment(token)));
    case 'strong_open':
      return same(h('strong'));
    case 'em_open':
      return same(h('em'));
    case 's_open':
      return same(h('del'));
    case 'link_open': {
      const href = token.attrGet('href') ?? '';
      // Not a link we open (javascript:, command:, file:, a relative path): the text stays, the target goes.
      return same(SAFE_LINK.test(href) ? h('a', { href, title: href, rel: 'noreferrer noopener' }) : h('span'));
    }
    default:
      return same(h('span')); // a token this walker does not know: its content is kept, as text in a span
  }
}

function leaf(token: Token, options: RenderOptions): Node | null {
  switch (token.type) {
    case 'code_inline':
      return h('code', {}, token.content);
    case 'softbreak':
      return options.breaks ? h('br') : document.createTextNode('\n');
    case 'hardbreak':
      return h('br');
    case 'fence':
    case 'code_block':
      return codeBlock(token.content, token.type === 'fence' ? fenceLanguage(token) : '', options.copy);
    case 'hr':
      return h('hr');
    case 'image': {
      const src = token.attrGet('src') ?? '';
      const alt = plainText(token.children ?? []) || src;
      return SAFE_LINK.test(src) ? h('a', { href: src, title: src, rel: 'noreferrer noopener', class: 'md-image' }, alt) : h('span', {}, alt);
    }
    default:
      // text, text_special (an escape or an entity, already decoded), and anything else with content: as text.
      // Raw HTML (html_block, html_inline) only comes this way if it were switched on, and then as text too.
      return token.content ? document.createTextNode(token.content) : null;
  }
}

function codeBlock(text: string, language: string, copy: ((text: string) => void) | undefined): Node {
  const pre = h('pre', { class: 'md-code', tabindex: '0' }, h('code', language ? { 'data-lang': language } : {}, text));
  if (!copy) return pre;
  const button = h('button', { class: 'icon copy', title: 'Copy this code to the clipboard' }, 'Copy');
  button.addEventListener('click', () => {
    copy(text.replace(/\n$/, '')); // the block's last line, without the newline markdown-it ends it with
    button.textContent = 'Copied';
    setTimeout(() => (button.textContent = 'Copy'), 1500);
  });
  return h('div', { class: 'md-code-block' }, button, pre);
}

function headingLevel(token: Token): number {
  const level = Number.parseInt(token.tag.slice(1), 10);
  return Number.isInteger(level) ? level : 1;
}

/** The fence's language: the first word of its info string, escapes and entities resolved by markdown-it's helper. */
function fenceLanguage(token: Token): string {
  return chatMarkdown.utils.unescapeAll(token.info).trim().split(/\s+/)[0] ?? '';
}

/** A table cell's alignment, as markdown-it gives it (`style="text-align:…"`), as one of our classes. */
function alignment(token: Token): { class?: string } {
  const align = /^text-align:(left|center|right)$/.exec(token.attrGet('style') ?? '')?.[1];
  return align ? { class: `align-${align}` } : {};
}

/** An image's alternative text: the words of its label, without their markup. */
function plainText(tokens: readonly Token[]): string {
  return tokens.map((token) => (token.type === 'image' ? plainText(token.children ?? []) : token.type === 'softbreak' ? ' ' : token.content)).join('');
}
