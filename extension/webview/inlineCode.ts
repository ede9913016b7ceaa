/**
 * The sidecar's reasons put commands, rules and paths between backticks (Markdown's code span), for the model and
 * for people alike. A card shows such a span as code, not as literal backticks; everything else stays text.
 */

import { h } from './dom';

const CODE_SPAN = /`([^`\n]+)`/g;

/** `text` with each backticked span as a <code> element; no other Markdown is read (a reason's `*` is a glob). */
export function withCodeSpans(text: string): (Node | string)[] {
  const parts: (Node | string)[] = [];
  let last = 0;
  for (const match of text.matchAll(CODE_SPAN)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(h('code', {}, match[1] ?? ''));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** The same text for a tooltip, which cannot show code: the spans' words without their backticks. */
export function withoutCodeMarks(text: string): string {
  return text.replace(CODE_SPAN, '$1');
}
