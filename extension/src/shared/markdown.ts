/**
 * A small Markdown parser for the model's replies. It produces a tree, never HTML: the webview turns the tree into
 * DOM nodes with `textContent`, so nothing the model writes can become markup, script or a remote request.
 *
 * Supported: paragraphs, ATX headings, fenced code (an unclosed fence while streaming runs to the end), block
 * quotes, bullet and numbered lists (nested by indentation), thematic breaks, pipe tables; inline code, strong,
 * emphasis, strikethrough, links (http, https and mailto only; anything else stays text) and backslash escapes.
 * Raw HTML and images are shown as the text the model wrote.
 */

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'code'; v: string }
  | { t: 'strong'; c: Inline[] }
  | { t: 'em'; c: Inline[] }
  | { t: 'del'; c: Inline[] }
  | { t: 'link'; href: string; c: Inline[] }
  | { t: 'span'; c: Inline[] }
  | { t: 'br' };

export type Align = 'left' | 'center' | 'right' | null;

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'pre'; lang: string; v: string }
  | { t: 'quote'; c: Block[] }
  | { t: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { t: 'hr' }
  | { t: 'table'; align: Align[]; head: Inline[][]; rows: Inline[][][] };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const HR = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

export function parseMarkdown(source: string): Block[] {
  return parseBlocks(source.replace(/\r\n?/g, '\n').split('\n'));
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

function parseBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    if (isBlank(line)) {
      index++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? '```';
      const body: string[] = [];
      index++;
      while (index < lines.length && !isClosingFence(lines[index] ?? '', marker)) body.push(lines[index++] ?? '');
      index++; // the closing fence, or past the end when the fence is still open (streaming)
      blocks.push({ t: 'pre', lang: fence[2] ?? '', v: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ t: 'h', level: (heading[1] ?? '#').length, c: parseInline(heading[2] ?? '') });
      index++;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ t: 'hr' });
      index++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (index < lines.length && !isBlank(lines[index] ?? '')) {
        const quoted = QUOTE.exec(lines[index] ?? '');
        body.push(quoted ? (quoted[1] ?? '') : (lines[index] ?? ''));
        index++;
      }
      blocks.push({ t: 'quote', c: parseBlocks(body) });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      index = parseList(lines, index, blocks);
      continue;
    }
    if (line.includes('|') && TABLE_DELIMITER.test(lines[index + 1] ?? '') && lines[index + 1]?.includes('-')) {
      index = parseTable(lines, index, blocks);
      continue;
    }
    const paragraph: string[] = [];
    while (index < lines.length && !isBlank(lines[index] ?? '') && !startsBlock(lines[index] ?? '')) {
      paragraph.push((lines[index] ?? '').trim());
      index++;
    }
    if (paragraph.length === 0) {
      // A line that looks like a block start but was not taken as one: keep it as text rather than loop.
      paragraph.push(line.trim());
      index++;
    }
    blocks.push({ t: 'p', c: parseInline(paragraph.join('\n')) });
  }
  return blocks;
}

function isClosingFence(line: string, marker: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= marker.length && trimmed === (marker[0] ?? '`').repeat(trimmed.length);
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function parseList(lines: string[], start: number, blocks: Block[]): number {
  const first = LIST_ITEM.exec(lines[start] ?? '');
  const ordered = first ? /\d/.test(first[2] ?? '') : false;
  const startNumber = ordered && first ? Number.parseInt(first[2] ?? '1', 10) : 1;
  const items: Block[][] = [];
  let index = start;
  while (index < lines.length) {
    const match = LIST_ITEM.exec(lines[index] ?? '');
    if (!match || /\d/.test(match[2] ?? '') !== ordered) break;
    const contentIndent = (match[1] ?? '').length + (match[2] ?? '').length + Math.max(1, (match[3] ?? ' ').length);
    const body = [match[4] ?? ''];
    index++;
    while (index < lines.length) {
      const next = lines[index] ?? '';
      if (isBlank(next)) {
        // A blank line continues the item only if indented content follows.
        const following = lines[index + 1];
        if (following !== undefined && indentOf(following) >= contentIndent && !isBlank(following)) {
          body.push('');
          index++;
          continue;
        }
        break;
      }
      if (indentOf(next) >= contentIndent) {
        body.push(next.slice(contentIndent));
      } else if (!LIST_ITEM.test(next) && !startsBlock(next)) {
        body.push(next.trim()); // a lazy continuation line of the item's paragraph
      } else {
        break;
      }
      index++;
    }
    items.push(parseBlocks(body));
    // Blank lines between items keep the list going.
    while (index < lines.length && isBlank(lines[index] ?? '') && LIST_ITEM.test(lines[index + 1] ?? '')) index++;
  }
  blocks.push({ t: 'list', ordered, start: startNumber, items });
  return index;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells: string[] = [];
  let current = '';
  for (let i = 0; i < row.length; i++) {
    const ch = row[i];
    if (ch === '\\' && row[i + 1] === '|') {
      current += '|';
      i++;
    } else if (ch === '|') {
      cells.push(current.trim());
      current = '';
    } else {
      current += ch;
    }
  }
  cells.push(current.trim());
  return cells;
}

function parseTable(lines: string[], start: number, blocks: Block[]): number {
  const head = splitRow(lines[start] ?? '');
  const align: Align[] = splitRow(lines[start + 1] ?? '').map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
  });
  const rows: Inline[][][] = [];
  let index = start + 2;
  while (index < lines.length && !isBlank(lines[index] ?? '') && (lines[index] ?? '').includes('|')) {
    const cells = splitRow(lines[index] ?? '');
    rows.push(head.map((_, column) => parseInline(cells[column] ?? '')));
    index++;
  }
  blocks.push({ t: 'table', align: head.map((_, column) => align[column] ?? null), head: head.map(parseInline), rows });
  return index;
}

// ---------------------------------------------------------------------------------------------------------------
// Inline
// ---------------------------------------------------------------------------------------------------------------

const ESCAPABLE = '\\`*_{}[]()#+-.!|~<>';

export function parseInline(source: string): Inline[] {
  const out: Inline[] = [];
  let buffer = '';
  const flush = (): void => {
    if (buffer) out.push({ t: 'text', v: buffer });
    buffer = '';
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i] ?? '';
    if (ch === '\\' && i + 1 < source.length && ESCAPABLE.includes(source[i + 1] ?? '')) {
      buffer += source[i + 1];
      i += 2;
      continue;
    }
    if (ch === '\n') {
      flush();
      out.push({ t: 'br' });
      i++;
      continue;
    }
    if (ch === '`') {
      const run = countRun(source, i, '`');
      const close = source.indexOf('`'.repeat(run), i + run);
      if (close !== -1 && source[close + run] !== '`') {
        flush();
        const code = source.slice(i + run, close);
        out.push({ t: 'code', v: /^ .* $/.test(code) ? code.slice(1, -1) : code });
        i = close + run;
        continue;
      }
      buffer += '`'.repeat(run);
      i += run;
      continue;
    }
    if (ch === '[') {
      const link = parseLink(source, i);
      if (link) {
        flush();
        out.push(link.node);
        i = link.end;
        continue;
      }
    }
    if (ch === '<') {
      const close = source.indexOf('>', i);
      const target = close === -1 ? '' : source.slice(i + 1, close);
      if (SAFE_LINK.test(target) && !/\s/.test(target)) {
        flush();
        out.push({ t: 'link', href: target, c: [{ t: 'text', v: target }] });
        i = close + 1;
        continue;
      }
    }
    if (ch === '*' || ch === '_' || ch === '~') {
      const span = parseDelimited(source, i, ch);
      if (span) {
        flush();
        out.push(span.node);
        i = span.end;
        continue;
      }
    }
    buffer += ch;
    i++;
  }
  flush();
  return out;
}

function countRun(source: string, at: number, ch: string): number {
  let n = 0;
  while (source[at + n] === ch) n++;
  return n;
}

function parseDelimited(source: string, at: number, ch: string): { node: Inline; end: number } | undefined {
  const run = countRun(source, at, ch);
  if (ch === '~' && run !== 2) return undefined;
  const size = ch === '~' ? 2 : Math.min(run, 2);
  const open = ch.repeat(size);
  const after = source[at + size];
  if (after === undefined || /\s/.test(after)) return undefined;
  // Underscores inside words (snake_case) are not emphasis.
  if (ch === '_' && at > 0 && /[\p{L}\p{N}]/u.test(source[at - 1] ?? '')) return undefined;
  let search = at + size;
  while (search < source.length) {
    const close = source.indexOf(open, search);
    if (close === -1) return undefined;
    const before = source[close - 1] ?? '';
    const next = source[close + size] ?? '';
    const closesWord = ch !== '_' || !/[\p{L}\p{N}]/u.test(next);
    if (close > at + size && !/\s/.test(before) && closesWord && (size === 2 || next !== ch)) {
      const inner = parseInline(source.slice(at + size, close));
      const node: Inline = ch === '~' ? { t: 'del', c: inner } : size === 2 ? { t: 'strong', c: inner } : { t: 'em', c: inner };
      return { node, end: close + size };
    }
    search = close + 1;
  }
  return undefined;
}

function parseLink(source: string, at: number): { node: Inline; end: number } | undefined {
  let depth = 0;
  let close = -1;
  for (let i = at; i < source.length; i++) {
    if (source[i] === '\\') {
      i++;
      continue;
    }
    if (source[i] === '[') depth++;
    if (source[i] === ']' && --depth === 0) {
      close = i;
      break;
    }
  }
  if (close === -1 || source[close + 1] !== '(') return undefined;
  const end = source.indexOf(')', close + 2);
  if (end === -1) return undefined;
  const target = source.slice(close + 2, end).trim().split(/\s+/)[0] ?? '';
  const label = parseInline(source.slice(at + 1, close));
  if (!SAFE_LINK.test(target)) {
    // Not a link we open (javascript:, command:, file:, relative): keep the label, drop the target.
    return { node: { t: 'span', c: label }, end: end + 1 };
  }
  return { node: { t: 'link', href: target, c: label }, end: end + 1 };
}
