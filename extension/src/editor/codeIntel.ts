/**
 * `toolgate/editor/intel` and `toolgate/editor/intelLanguages`: the sidecar asks what the editor's language features
 * say; this module asks VS Code (through `LanguageFeatures`, implemented over `vscode.execute*Provider` commands in
 * src/vscode/, which read the open buffers) and turns the answer into plain protocol data. It decides nothing about
 * what the model sees: that is the sidecar's job.
 *
 * VS Code's answers are read by their shape (a Location or a LocationLink, a DocumentSymbol tree or flat
 * SymbolInformation, hover contents as markdown or plain strings), so the same code serves every language.
 */

import type { HandlerRegistry } from '../sidecar/sidecarClient';
import { Methods } from '../protocol.generated';
import type {
  FileTextEdits,
  IntelAnswerResult,
  IntelLanguagesResult,
  IntelLocation,
  IntelQueryParams,
  Span,
} from '../protocol.generated';

/** The `vscode.execute*` commands behind each question; the wrapper runs them with a Uri and a Position. */
export const COMMANDS = {
  definition: 'vscode.executeDefinitionProvider',
  references: 'vscode.executeReferenceProvider',
  implementations: 'vscode.executeImplementationProvider',
  hover: 'vscode.executeHoverProvider',
  documentSymbols: 'vscode.executeDocumentSymbolProvider',
  workspaceSymbols: 'vscode.executeWorkspaceSymbolProvider',
  prepareCallHierarchy: 'vscode.prepareCallHierarchy',
  incomingCalls: 'vscode.provideIncomingCalls',
  outgoingCalls: 'vscode.provideOutgoingCalls',
  rename: 'vscode.executeDocumentRenameProvider',
} as const;

export interface LanguageFeatures {
  /** Run `command` for the document at `path` (and the position, and `extra` arguments, when given). */
  inDocument(command: string, path: string, position?: { line: number; character: number }, ...extra: unknown[]): Promise<unknown>;
  /** Run `command` with these arguments as they are (workspace symbols, call hierarchy items). */
  run(command: string, ...args: unknown[]): Promise<unknown>;
  /** For each language with a code file in the workspace or open in the editor: one such file's path. */
  sampleFiles(): Promise<Map<string, string>>;
}

// -- reading VS Code's values by their shape -------------------------------------------------------------------------

interface RangeLike {
  start: { line: number; character: number };
  end: { line: number; character: number };
}
interface UriLike {
  fsPath?: string;
  path: string;
  scheme: string;
}

// vscode.SymbolKind, in its order (0-based).
const SYMBOL_KINDS = [
  'File', 'Module', 'Namespace', 'Package', 'Class', 'Method', 'Property', 'Field', 'Constructor', 'Enum',
  'Interface', 'Function', 'Variable', 'Constant', 'String', 'Number', 'Boolean', 'Array', 'Object', 'Key', 'Null',
  'EnumMember', 'Struct', 'Event', 'Operator', 'TypeParameter',
];

function kindName(kind: unknown): string | null {
  return typeof kind === 'number' ? (SYMBOL_KINDS[kind] ?? null) : null;
}

function spanOf(range: RangeLike): Span {
  return {
    startLine: range.start.line,
    startCharacter: range.start.character,
    endLine: range.end.line,
    endCharacter: range.end.character,
  };
}

function pathOf(uri: UriLike): string | null {
  // Only files on disk: an untitled buffer or a virtual document has no path the sidecar could use.
  return uri.scheme === 'file' ? (uri.fsPath ?? uri.path) : null;
}

function location(uri: UriLike, range: RangeLike, extra: Partial<IntelLocation> = {}): IntelLocation[] {
  const path = pathOf(uri);
  return path === null ? [] : [{ path, span: spanOf(range), ...extra }];
}

/** Location | LocationLink, one or many. */
export function locationsOf(value: unknown): IntelLocation[] {
  const items = Array.isArray(value) ? value : value ? [value] : [];
  return items.flatMap((item: Record<string, unknown>) => {
    if (item.targetUri) return location(item.targetUri as UriLike, (item.targetSelectionRange ?? item.targetRange) as RangeLike);
    if (item.uri && item.range) return location(item.uri as UriLike, item.range as RangeLike);
    return [];
  });
}

/** DocumentSymbol trees (flattened, with depth) or SymbolInformation lists. */
export function symbolsOf(value: unknown, documentPath: string | null): IntelLocation[] {
  const found: IntelLocation[] = [];
  const visit = (item: Record<string, unknown>, depth: number): void => {
    const extra = { name: String(item.name), kind: kindName(item.kind), depth };
    if (item.location) {
      const where = item.location as { uri: UriLike; range: RangeLike };
      found.push(...location(where.uri, where.range, { ...extra, container: (item.containerName as string) || null }));
    } else if (documentPath !== null && item.range) {
      found.push({ path: documentPath, span: spanOf((item.selectionRange ?? item.range) as RangeLike), ...extra });
    }
    for (const child of (item.children as Record<string, unknown>[] | undefined) ?? []) visit(child, depth + 1);
  };
  for (const item of Array.isArray(value) ? value : []) visit(item as Record<string, unknown>, 0);
  return found;
}

export function hoverTexts(value: unknown): string[] {
  const texts: string[] = [];
  for (const hover of Array.isArray(value) ? value : []) {
    for (const part of (hover as { contents?: unknown[] }).contents ?? []) {
      if (typeof part === 'string') texts.push(part);
      else if (part && typeof part === 'object' && 'value' in part) {
        const { value: text, language } = part as { value: string; language?: string };
        texts.push(language ? `\`\`\`${language}\n${text}\n\`\`\`` : text);
      }
    }
  }
  return texts;
}

/** A WorkspaceEdit's text edits by file. */
export function renameEditsOf(value: unknown): FileTextEdits[] {
  const edit = value as { entries?: () => [UriLike, { range: RangeLike; newText: string }[]][] } | undefined;
  const files: FileTextEdits[] = [];
  for (const [uri, edits] of edit?.entries?.() ?? []) {
    const path = pathOf(uri);
    if (path === null) continue;
    files.push({ path, edits: edits.map((e) => ({ span: spanOf(e.range), newText: e.newText })) });
  }
  return files;
}

function callsOf(value: unknown, side: 'from' | 'to'): IntelLocation[] {
  return (Array.isArray(value) ? value : []).flatMap((call: Record<string, Record<string, unknown>>) => {
    const item = call[side];
    if (!item) return [];
    return location(item.uri as UriLike, (item.selectionRange ?? item.range) as RangeLike, {
      name: String(item.name),
      kind: kindName(item.kind),
    });
  });
}

// -- answering ----------------------------------------------------------------------------------------------------------

const NO_PROVIDER: IntelAnswerResult = { provided: false, locations: [], hover: [], edits: [], refused: null };

function answer(parts: Partial<IntelAnswerResult>): IntelAnswerResult {
  return { provided: true, locations: [], hover: [], edits: [], refused: null, ...parts };
}

export class CodeIntelAnswers {
  constructor(private readonly features: LanguageFeatures) {}

  async answer(query: IntelQueryParams): Promise<IntelAnswerResult> {
    try {
      return await this.ask(query);
    } catch (error) {
      // A provider that throws says why (a rename refused here, a server that crashed): that is the answer.
      return { ...NO_PROVIDER, provided: true, refused: error instanceof Error ? error.message : String(error) };
    }
  }

  private async ask(query: IntelQueryParams): Promise<IntelAnswerResult> {
    const { path } = query;
    if (query.operation === 'workspace_symbols') {
      const found = await this.features.run(COMMANDS.workspaceSymbols, query.query ?? '');
      return found === undefined ? NO_PROVIDER : answer({ locations: symbolsOf(found, null) });
    }
    if (path === null) return { ...NO_PROVIDER, provided: true, refused: 'the question names no document' };
    if (query.operation === 'document_symbols') {
      const found = await this.features.inDocument(COMMANDS.documentSymbols, path);
      return found === undefined ? NO_PROVIDER : answer({ locations: symbolsOf(found, path) });
    }
    if (query.line === null || query.character === null) {
      return { ...NO_PROVIDER, provided: true, refused: 'the question names no position' };
    }
    const position = { line: query.line, character: query.character };
    switch (query.operation) {
      case 'definition':
      case 'references':
      case 'implementations': {
        const found = await this.features.inDocument(COMMANDS[query.operation], path, position);
        return found === undefined ? NO_PROVIDER : answer({ locations: locationsOf(found) });
      }
      case 'hover': {
        const found = await this.features.inDocument(COMMANDS.hover, path, position);
        return found === undefined ? NO_PROVIDER : answer({ hover: hoverTexts(found) });
      }
      case 'incoming_calls':
      case 'outgoing_calls': {
        const items = await this.features.inDocument(COMMANDS.prepareCallHierarchy, path, position);
        if (!Array.isArray(items)) return NO_PROVIDER;
        const incoming = query.operation === 'incoming_calls';
        const calls = await Promise.all(
          items.map((item) => this.features.run(incoming ? COMMANDS.incomingCalls : COMMANDS.outgoingCalls, item)),
        );
        return answer({ locations: calls.flatMap((found) => callsOf(found, incoming ? 'from' : 'to')) });
      }
      case 'rename': {
        const edit = await this.features.inDocument(COMMANDS.rename, path, position, query.newName ?? '');
        return edit === undefined ? NO_PROVIDER : answer({ edits: renameEditsOf(edit) });
      }
    }
    return { ...NO_PROVIDER, provided: true, refused: `unknown operation ${String(query.operation)}` };
  }

  /** The languages whose sample file has a document symbol provider (a proxy for "has language features"). */
  async languages(): Promise<IntelLanguagesResult> {
    const samples = await this.features.sampleFiles();
    const covered = await Promise.all(
      [...samples].map(async ([language, path]) => {
        try {
          const found = await this.features.inDocument(COMMANDS.documentSymbols, path);
          return Array.isArray(found) && found.length > 0 ? [language] : [];
        } catch {
          return [];
        }
      }),
    );
    return { languages: covered.flat().sort() };
  }
}

/** Answer the sidecar's language-feature questions, for every sidecar process the registry starts. */
export function serveCodeIntel(handlers: HandlerRegistry, features: LanguageFeatures): void {
  const answers = new CodeIntelAnswers(features);
  handlers.onRequest(Methods.editorIntel, (params) => answers.answer(params as IntelQueryParams));
  handlers.onRequest(Methods.editorIntelLanguages, () => answers.languages());
}
