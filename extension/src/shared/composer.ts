/**
 * The composer's one completion mechanism, as plain functions: where a trigger (`@` anywhere after a space, `/` at
 * the start) begins, how candidates are ranked, what a key does to an open list, and the slash commands. The webview
 * (webview/composer.ts) draws it; the host (chat/composerHost.ts) supplies `@` candidates and runs the commands.
 */

import type { Attachment } from '../protocol';

export type { Attachment };

export type CompletionKind = 'file' | 'folder' | 'symbol' | 'problems' | 'command';

export interface CompletionItem {
  kind: CompletionKind;
  /** What the list shows, and what filtering matches (a workspace-relative path, a symbol's name, `/model`). */
  label: string;
  /** A second, dimmer part: a symbol's file, a command's description. */
  detail: string;
  /** What choosing it attaches (none for a slash command). */
  attachment?: Attachment;
  /** The chip's text once chosen, when the attachment cannot say it alone (how many problems the editor has). */
  chip?: string;
}

export interface Trigger {
  char: '@' | '/';
  query: string;
  /** Where the trigger character is in the text (what choosing replaces, up to the caret). */
  start: number;
}

/** The trigger the caret is in, if any: `@query` after a space or at the start, or `/command` as the whole first word. */
export function findTrigger(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  const slash = /^\/(\S*)$/.exec(before);
  if (slash) return { char: '/', query: slash[1] ?? '', start: 0 };
  const at = /(?:^|\s)@([^\s@]*)$/.exec(before);
  if (!at) return undefined;
  const query = at[1] ?? '';
  return { char: '@', query, start: caret - query.length - 1 };
}

/**
 * How well `label` matches `query` (higher is better; undefined: not at all). Every query character must appear in
 * order (case-insensitive); a match at the start of the name (the part after the last `/`) beats one at the start of
 * the label, which beats a contiguous one anywhere, which beats a scattered one; shorter labels break ties.
 */
export function matchScore(label: string, query: string): number | undefined {
  if (query === '') return 0;
  const haystack = label.toLowerCase();
  const needle = query.toLowerCase();
  const name = haystack.slice(haystack.lastIndexOf('/', haystack.length - 2) + 1);
  if (name.startsWith(needle)) return 400 - label.length / 1000;
  if (haystack.startsWith(needle)) return 300 - label.length / 1000;
  if (haystack.includes(needle)) return 200 - label.length / 1000;
  let from = 0;
  for (const char of needle) {
    const found = haystack.indexOf(char, from);
    if (found < 0) return undefined;
    from = found + 1;
  }
  return 100 - label.length / 1000;
}

/** The candidates that match, best first (a stable order among equals), at most `max`. */
export function rankCandidates(items: readonly CompletionItem[], query: string, max = 50): CompletionItem[] {
  return items
    .map((item, index) => ({ item, index, score: matchScore(item.label, query) }))
    .filter((entry): entry is { item: CompletionItem; index: number; score: number } => entry.score !== undefined)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, max)
    .map((entry) => entry.item);
}

export type ListKey = 'next' | 'previous' | 'accept' | 'close';

/** What a key does while the list is open (undefined: it is the composer's, as usual). */
export function listKey(key: string, modifiers: { shift: boolean; alt: boolean; ctrl: boolean; meta: boolean }): ListKey | undefined {
  if (modifiers.alt || modifiers.ctrl || modifiers.meta) return undefined;
  switch (key) {
    case 'ArrowDown':
      return 'next';
    case 'ArrowUp':
      return 'previous';
    case 'Enter':
      return modifiers.shift ? undefined : 'accept';
    case 'Tab':
      return modifiers.shift ? undefined : 'accept';
    case 'Escape':
      return 'close';
    default:
      return undefined;
  }
}

/** Enter on a command typed out in full sends it (the list only completes; it must not cost a second Enter). */
export function isTypedOut(trigger: Trigger, item: CompletionItem | undefined): boolean {
  return trigger.char === '/' && item?.kind === 'command' && item.label === `/${trigger.query}`;
}

/** The selected row after `key` in a list of `count` rows (wrapping around). */
export function moveSelection(selected: number, count: number, key: 'next' | 'previous'): number {
  if (count === 0) return 0;
  return (selected + (key === 'next' ? 1 : count - 1)) % count;
}

/** The text once an item is chosen: the trigger and its query replaced (a command keeps a space for its argument). */
export function applyChoice(text: string, caret: number, trigger: Trigger, item: CompletionItem): { text: string; caret: number } {
  const inserted = item.kind === 'command' ? `${item.label} ` : `@${item.label} `;
  const after = text.slice(caret).replace(/^\S*/, '');
  const next = text.slice(0, trigger.start) + inserted + after.replace(/^ /, '');
  return { text: next, caret: trigger.start + inserted.length };
}

// -- slash commands -----------------------------------------------------------------------------------------------

export type SlashName = 'model' | 'compact' | 'clear' | 'rewind' | 'rules' | 'mcp' | 'help';

export const SLASH_COMMANDS: readonly { name: SlashName; argument: string; description: string }[] = [
  { name: 'model', argument: '[name]', description: 'Switch the model (no name: pick from the list)' },
  { name: 'compact', argument: '[focus]', description: 'Summarise the older turns to free context' },
  { name: 'clear', argument: '', description: 'Start a new session' },
  { name: 'rewind', argument: '', description: 'Restore files or conversation to before your last message' },
  { name: 'rules', argument: '', description: 'See and edit the permission rules' },
  { name: 'mcp', argument: '', description: 'Show the MCP servers' },
  { name: 'help', argument: '', description: 'List the commands and keyboard shortcuts' },
];

export function slashCompletions(): CompletionItem[] {
  return SLASH_COMMANDS.map((command) => ({
    kind: 'command',
    label: `/${command.name}`,
    detail: `${command.argument ? `${command.argument} ` : ''}${command.description}`,
  }));
}

/** A message that is a slash command: its name and argument (undefined: an ordinary message, sent to the model). */
export function parseSlash(text: string): { name: SlashName; argument: string } | undefined {
  const match = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  const command = SLASH_COMMANDS.find((candidate) => candidate.name === match?.[1]);
  return command ? { name: command.name, argument: match?.[2]?.trim() ?? '' } : undefined;
}

/** A chip's text for an attachment. */
export function attachmentLabel(attachment: Attachment, shownPath: string): string {
  switch (attachment.kind) {
    case 'problems':
      return attachment.path ? `Problems in ${shownPath}` : 'Problems';
    case 'folder':
      return `${shownPath}/`;
    case 'selection': {
      const lines = attachment.startLine === attachment.endLine ? `${attachment.startLine}` : `${attachment.startLine}-${attachment.endLine}`;
      return `${attachment.label ?? shownPath}:${lines}`;
    }
    default:
      return shownPath;
  }
}

/** A key that tells two attachments apart (the same one attached twice is kept once). */
export function attachmentKey(attachment: Attachment): string {
  return [attachment.kind, attachment.path ?? '', attachment.startLine ?? '', attachment.endLine ?? ''].join('|');
}
