/**
 * A small line-by-line highlighter for code shown in tool cards (a Read's lines): comments, strings, numbers and
 * keywords, chosen by the file's extension. It colours for reading, not for parsing: a construct it does not know
 * (a comment spanning lines, a nested template) stays plain text, never wrong text. The tokenizer is pure;
 * `highlightLine` builds the spans with text nodes only (dom.ts).
 */

import { h } from './dom';

export type TokenKind = 'comment' | 'string' | 'number' | 'keyword' | 'plain';

export interface Token {
  kind: TokenKind;
  text: string;
}

interface Language {
  /** What starts a comment that runs to the end of the line. */
  lineComment: string[];
  keywords: ReadonlySet<string>;
}

const words = (text: string): ReadonlySet<string> => new Set(text.split(' '));

const C_LIKE = words(
  'break case catch class const continue default do else enum export extends false final finally for fn function ' +
    'if impl import in interface let match mut new null package private protected pub public return static struct ' +
    'super switch this throw true try type typeof use var void while yield async await from as of interface',
);
const PYTHON = words(
  'and as assert async await break class continue def del elif else except False finally for from global if import ' +
    'in is lambda None nonlocal not or pass raise return True try while with yield self',
);
const SHELL = words('if then else elif fi for while until do done case esac in function return export local set echo');

const LANGUAGES: Record<string, Language> = {
  c: { lineComment: ['//'], keywords: C_LIKE },
  python: { lineComment: ['#'], keywords: PYTHON },
  shell: { lineComment: ['#'], keywords: SHELL },
  config: { lineComment: ['#'], keywords: words('true false null') },
};

const BY_EXTENSION: Record<string, keyof typeof LANGUAGES> = {
  ts: 'c', tsx: 'c', js: 'c', jsx: 'c', mjs: 'c', cjs: 'c', java: 'c', go: 'c', rs: 'c', c: 'c', h: 'c', cc: 'c',
  cpp: 'c', hpp: 'c', cs: 'c', kt: 'c', swift: 'c', scala: 'c', dart: 'c', json: 'c', jsonc: 'c',
  py: 'python', pyi: 'python',
  sh: 'shell', bash: 'shell', zsh: 'shell',
  toml: 'config', yaml: 'config', yml: 'config', cfg: 'config', ini: 'config', rb: 'config', r: 'config', pl: 'config',
}; // prettier-ignore

/** The language a file is highlighted as, by its extension; null: shown plain. */
export function languageOf(path: string): Language | null {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';
  const name = BY_EXTENSION[extension];
  return name ? (LANGUAGES[name] ?? null) : null;
}

const STRING = /^("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)/;
const NUMBER = /^(0x[0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b/;
const WORD = /^[A-Za-z_$][\w$]*/;

/** One line as tokens; their texts joined give back the line exactly. */
export function tokenize(line: string, language: Language | null): Token[] {
  if (!language) return line ? [{ kind: 'plain', text: line }] : [];
  const tokens: Token[] = [];
  const push = (kind: TokenKind, text: string): void => {
    const last = tokens[tokens.length - 1];
    if (last && last.kind === kind && kind === 'plain') last.text += text;
    else tokens.push({ kind, text });
  };
  let rest = line;
  while (rest) {
    if (language.lineComment.some((start) => rest.startsWith(start))) {
      push('comment', rest);
      break;
    }
    const match = STRING.exec(rest) ?? NUMBER.exec(rest);
    if (match) {
      push(match[0].startsWith('"') || match[0].startsWith("'") || match[0].startsWith('`') ? 'string' : 'number', match[0]);
      rest = rest.slice(match[0].length);
      continue;
    }
    const word = WORD.exec(rest)?.[0];
    if (word) {
      push(language.keywords.has(word) ? 'keyword' : 'plain', word);
      rest = rest.slice(word.length);
      continue;
    }
    push('plain', rest[0] as string);
    rest = rest.slice(1);
  }
  return tokens;
}

/** A line as DOM: a span per coloured token, text nodes for the rest. */
export function highlightLine(line: string, language: Language | null): (Node | string)[] {
  return tokenize(line, language).map((token) => (token.kind === 'plain' ? token.text : h('span', { class: `tok-${token.kind}` }, token.text)));
}
