/**
 * What a finished tool call's card shows a person, decided apart from drawing it: the text the model got is written
 * for the model (numbered lines, `path:line:text` records, a patch), so each kind of result is read back here into
 * what a person looks at (the file's lines, a diff, files with their match counts). Pure: no DOM. The model's text
 * itself is never changed; the card keeps it too, behind "As the model sees it".
 */

/** One line of a file as Read returned it: its number in the file and its text, without the number prefix. */
export interface NumberedLine {
  number: number;
  text: string;
}

/**
 * Every view says what it found in the card's one line: `headline` in place of the call's summary (Read: "40 lines
 * of src/x.py", after the tool's name), or `stat` after it (a diff's "+3 −1", a search's "12 matches in 3 files").
 */
interface Headline {
  headline: string | null;
  stat: string;
}

export interface ReadView extends Headline {
  kind: 'read';
  /** The file's path as the summary shows it (for the highlighter's choice of language). */
  path: string;
  lines: NumberedLine[];
  /** Anything in the result that is not a numbered line (a note about a cut, say). */
  notes: string[];
}

export type DiffLineKind = 'added' | 'removed' | 'context' | 'hunk' | 'file';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

export interface DiffView extends Headline {
  kind: 'diff';
  lines: DiffLine[];
}

export interface MatchGroup {
  path: string;
  /** How many matching lines (or, for a count, the count); 0 for a file listed without a count. */
  count: number;
  lines: string[];
}

export interface SearchView extends Headline {
  kind: 'search';
  groups: MatchGroup[];
  notes: string[];
}

export interface TodoEntry {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

export interface TodosView extends Headline {
  kind: 'todos';
  todos: TodoEntry[];
}

export type ResultView = ReadView | DiffView | SearchView | TodosView;

const TODO_STATUSES: ReadonlySet<string> = new Set(['pending', 'in_progress', 'completed']);

/**
 * TodoWrite, from its input: the list as it stood after the call. The list pinned under the transcript goes once
 * every item is done; this card is where a finished list is read from then.
 */
export function todosView(input: unknown): TodosView | null {
  const todos = (input as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return null;
  const entries = todos.filter(
    (todo): todo is TodoEntry =>
      typeof todo === 'object' && todo !== null && typeof todo.content === 'string' && TODO_STATUSES.has(todo.status),
  );
  const done = entries.filter((todo) => todo.status === 'completed').length;
  return { kind: 'todos', headline: `${done} of ${entries.length} done`, stat: '', todos: entries };
}

/** A finished list (every item done) is not pinned: it is read from its TodoWrite card in the transcript. */
export function todosFinished(todos: readonly { status: string }[]): boolean {
  return todos.length > 0 && todos.every((todo) => todo.status === 'completed');
}

/** "1 line", "1,204 lines". */
function counted(count: number, one: string, many: string): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}

/** Read's numbered line: the number, a tab, the text (text/lines.py number_lines). */
const NUMBERED = /^\s*(\d+)\t(.*)$/;

/** A Read result as the file's lines; null when it holds no numbered line (an empty file, an image, an error). */
export function readView(summary: string, result: string): ReadView | null {
  const lines: NumberedLine[] = [];
  const notes: string[] = [];
  for (const line of result.split('\n')) {
    const match = NUMBERED.exec(line);
    // After a note, a line that looks numbered is kept with the note (its order matters more than its look).
    if (match && notes.length === 0) lines.push({ number: Number(match[1]), text: match[2] ?? '' });
    else if (line.trim()) notes.push(line);
  }
  if (lines.length === 0) return null;
  // The summary is the path, and for a part of the file the range read ("src/x.py (lines 10–14)").
  const path = summary.replace(/ \((lines \d+–\d+|from line \d+)\)$/, '');
  const count = lines.length;
  return { kind: 'read', headline: `${counted(count, 'line', 'lines')} of ${path}`, stat: '', path, lines, notes };
}

/** The lines of `before` and `after` as a diff: removed, then added, around the lines they share. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const old = splitLines(before);
  const new_ = splitLines(after);
  // Common ends first: an Edit's old and new text usually differ in a few lines in the middle.
  let head = 0;
  while (head < old.length && head < new_.length && old[head] === new_[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < new_.length - head && old[old.length - 1 - tail] === new_[new_.length - 1 - tail]) tail++;
  const middle = lcsDiff(old.slice(head, old.length - tail), new_.slice(head, new_.length - tail));
  return [
    ...old.slice(0, head).map((text): DiffLine => ({ kind: 'context', text })),
    ...middle,
    ...old.slice(old.length - tail).map((text): DiffLine => ({ kind: 'context', text })),
  ];
}

/** Beyond this many cells the middle is shown as all removed, then all added (still correct, less tidy). */
const LCS_CELLS = 250_000;

function lcsDiff(old: string[], new_: string[]): DiffLine[] {
  const removed = old.map((text): DiffLine => ({ kind: 'removed', text }));
  const added = new_.map((text): DiffLine => ({ kind: 'added', text }));
  if (old.length === 0 || new_.length === 0 || old.length * new_.length > LCS_CELLS) return [...removed, ...added];
  // lengths[i][j]: the longest common subsequence of old[i..] and new_[j..].
  const lengths = Array.from({ length: old.length + 1 }, () => new Array<number>(new_.length + 1).fill(0));
  for (let i = old.length - 1; i >= 0; i--) {
    for (let j = new_.length - 1; j >= 0; j--) {
      const row = lengths[i] as number[];
      const below = lengths[i + 1] as number[];
      row[j] = old[i] === new_[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length && j < new_.length) {
    if (old[i] === new_[j]) {
      lines.push({ kind: 'context', text: old[i] as string });
      i++;
      j++;
    } else if ((lengths[i + 1]?.[j] ?? 0) >= (lengths[i]?.[j + 1] ?? 0)) {
      lines.push({ kind: 'removed', text: old[i++] as string });
    } else {
      lines.push({ kind: 'added', text: new_[j++] as string });
    }
  }
  return [...lines, ...removed.slice(i), ...added.slice(j)];
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** A patch (ApplyPatch's envelope or a unified diff) as diff lines, each by its first character. */
export function patchLines(patch: string): DiffLine[] {
  return splitLines(patch).map((line): DiffLine => {
    if (line.startsWith('*** ') || line.startsWith('--- ') || line.startsWith('+++ ')) return { kind: 'file', text: line };
    if (line.startsWith('@@')) return { kind: 'hunk', text: line };
    if (line.startsWith('+')) return { kind: 'added', text: line.slice(1) };
    if (line.startsWith('-')) return { kind: 'removed', text: line.slice(1) };
    return { kind: 'context', text: line.startsWith(' ') ? line.slice(1) : line };
  });
}

function diffOf(lines: DiffLine[]): DiffView {
  const added = lines.filter((line) => line.kind === 'added').length;
  const removed = lines.filter((line) => line.kind === 'removed').length;
  return { kind: 'diff', headline: null, stat: `+${added} −${removed}`, lines };
}

const stringOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Edit, Write and ApplyPatch, from the call's input: the change asked for, as a diff. */
export function changeView(toolName: string, input: unknown): DiffView | null {
  if (typeof input !== 'object' || input === null) return null;
  const fields = input as Record<string, unknown>;
  if (toolName === 'Edit') {
    const before = stringOf(fields.old_string);
    const after = stringOf(fields.new_string);
    return before === null || after === null ? null : diffOf(lineDiff(before, after));
  }
  if (toolName === 'Write') {
    // The file's earlier content is not in the call: what is written is all the card can show.
    const content = stringOf(fields.content);
    return content === null ? null : diffOf(lineDiff('', content));
  }
  if (toolName === 'ApplyPatch') {
    const patch = stringOf(fields.patch);
    return patch === null ? null : diffOf(patchLines(patch));
  }
  return null;
}

/** Grep's and Glob's words for an empty result (grep.py's _no_match_text, glob.py's to_result). */
const NOTHING_FOUND = /^No (matches for|files match) /;

/** Grep's `path:line:text` record; the path is the shortest that fits. */
const RECORD = /^(.+?):(\d+):(.*)$/;
/** A context line around a match: `path-line-text`. */
const CONTEXT_RECORD = /^(.+?)-(\d+)-(.*)$/;
/** Grep's count record: `path:N`. */
const COUNT = /^(.+):(\d+)$/;


/**
 * Grep and Glob results as files, each with how many lines matched in it. The result's own header or footer line
 * ("Found 3 files", "12 matching lines in 3 files") and bracketed notes go to `notes`; null for a result that lists
 * nothing (no match: its text says so better).
 */
export function searchView(toolName: string, result: string): SearchView | null {
  if (toolName !== 'Grep' && toolName !== 'Glob') return null;
  const notes: string[] = [];
  const groups = new Map<string, MatchGroup>();
  const group = (path: string): MatchGroup => {
    const found = groups.get(path) ?? { path, count: 0, lines: [] };
    groups.set(path, found);
    return found;
  };
  const [body = '', ...rest] = result.split('\n\n');
  if (NOTHING_FOUND.test(body)) return null;
  notes.push(...rest.join('\n').split('\n').filter((line) => line.trim()));
  const lines = body.split('\n').filter((line) => line.trim() && line !== '--');
  const listed = lines.filter((line) => !/^(Found |At least )/.test(line) && !/ matching lines? in [\d,]+ files?\.$/.test(line));
  notes.unshift(...lines.filter((line) => !listed.includes(line)));
  if (listed.length === 0 || listed.every((line) => /^\[.*\]$/.test(line))) return null;
  const record = (line: string): RegExpExecArray | null => RECORD.exec(line) ?? CONTEXT_RECORD.exec(line);
  const content = toolName === 'Grep' && listed.every((line) => record(line) !== null);
  const counts = toolName === 'Grep' && !content && listed.every((line) => COUNT.test(line));
  for (const line of listed) {
    if (content) {
      const match = RECORD.exec(line);
      const [, path = '', number = '', matched = ''] = match ?? record(line) ?? [];
      const found = group(path);
      if (match) found.count++; // a context line is shown, not counted
      found.lines.push(`${number}${match ? ':' : '-'} ${matched}`);
    } else if (counts) {
      const [, path = '', count = '0'] = COUNT.exec(line) ?? [];
      group(path).count += Number(count);
    } else {
      group(line);
    }
  }
  const files = [...groups.values()];
  const total = files.reduce((sum, file) => sum + file.count, 0);
  const fileCount = counted(files.length, 'file', 'files');
  const stat = content || counts ? `${counted(total, 'match', 'matches')} in ${fileCount}` : fileCount;
  return { kind: 'search', headline: null, stat, groups: files, notes };
}

/** The readable view of a finished call, when its tool has one. */
export function resultView(tool: { toolName: string; summary: string; status: string; result: string; input?: unknown }): ResultView | null {
  if (tool.status !== 'done') return null;
  if (tool.toolName === 'Read') return readView(tool.summary, tool.result);
  if (tool.toolName === 'TodoWrite') return todosView(tool.input);
  return changeView(tool.toolName, tool.input) ?? searchView(tool.toolName, tool.result);
}

/** A command is shown as a wrapped code block in the card when it does not fit the one-line summary. */
export function isLongCommand(toolName: string, summary: string): boolean {
  return toolName === 'Bash' && (summary.length > 60 || summary.includes('\n'));
}
