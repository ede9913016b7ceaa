// @vitest-environment jsdom
/**
 * The token walker against a sample of the CommonMark spec's examples (commonmark-sample.json says which, and whose
 * they are): parsed by markdown-it's CommonMark preset, drawn by our walker, the DOM must match the spec's HTML.
 *
 * Both sides go through one canonical form that leaves out only what the chat deliberately draws its own way:
 * heading levels (a reply's headings are made smaller), classes and titles, and the whitespace between blocks that
 * HTML does not show. Everything else (elements, nesting, text, entities, link targets, list numbers) must match.
 */

import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

import { renderTokens } from '../../webview/markdown';
import sample from './commonmark-sample.json';

const commonmark = new MarkdownIt('commonmark', { html: false });

const KEPT_ATTRIBUTES = ['href', 'start'];
const BLOCK_TAGS = 'p|h|blockquote|ul|ol|li|pre|hr|br';

function canonical(node: Node, inPre = false): string {
  if (node.nodeType === Node.TEXT_NODE) {
    const text = node.textContent ?? '';
    return escape(inPre ? text : text.replace(/\s+/g, ' '));
  }
  const children = [...node.childNodes].map((child) => canonical(child, inPre || child.parentElement?.tagName === 'PRE'));
  if (!(node instanceof Element)) return children.join('');
  const tag = /^h[1-6]$/i.test(node.tagName) ? 'h' : node.tagName.toLowerCase();
  const attributes = KEPT_ATTRIBUTES.filter((name) => node.hasAttribute(name)).map((name) => ` ${name}="${escape(node.getAttribute(name) ?? '')}"`);
  return ['hr', 'br'].includes(tag) ? `<${tag}>` : `<${tag}${attributes.join('')}>${children.join('')}</${tag}>`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Whitespace next to a block element's tags is not shown, so it is left out of the comparison. */
function withoutBlockSpace(html: string): string {
  return html.replace(new RegExp(`\\s*(</?(?:${BLOCK_TAGS})\\b[^>]*>)\\s*`, 'g'), '$1');
}

function canonicalOfSpecHtml(html: string): string {
  // Parsing the spec's own expected output, in the test: the renderer never parses HTML.
  const template = document.createElement('template');
  template.innerHTML = html;
  return withoutBlockSpace(canonical(template.content));
}

function canonicalOfOurs(markdown: string): string {
  return withoutBlockSpace(canonical(renderTokens(commonmark.parse(markdown, {}), { breaks: false })));
}

describe('the Markdown walker draws CommonMark spec examples as the spec does', () => {
  it('has a sample from every kind of Markdown the chat draws', () => {
    expect(sample.examples.length).toBeGreaterThan(150);
    expect(new Set(sample.examples.map((example) => example.section)).size).toBeGreaterThan(20);
  });

  it.each(sample.examples.map((example) => [example.example, example.section, example] as const))(
    'example %i (%s)',
    (_number, _section, example) => {
      expect(canonicalOfOurs(example.markdown)).toBe(canonicalOfSpecHtml(example.html));
    },
  );
});
