/**
 * In-memory files for diff reviews. Two stores are registered as file systems (vscodeApi.ts adapts them):
 * `toolgate-proposed` (writable: the person may edit a proposal, and saving it only writes here) and
 * `toolgate-original` (read-only: the original side of the diff, and the empty side of a new or deleted file).
 * The real file is never touched by the extension; the sidecar writes it after an Accept.
 */

import { Emitter } from '../host';
import type { ResourceRef } from '../host';

export type { ResourceRef };

export const PROPOSED_SCHEME = 'toolgate-proposed';
export const ORIGINAL_SCHEME = 'toolgate-original';

export type EntryType = 'file' | 'directory';

export interface EntryStat {
  type: EntryType;
  size: number;
  ctime: number;
  mtime: number;
}

export type StoreChange = { type: 'changed' | 'created' | 'deleted'; path: string };

export class StoreError extends Error {
  constructor(
    readonly code: 'FileNotFound' | 'FileExists' | 'NoPermissions' | 'FileIsADirectory' | 'FileNotADirectory',
    message: string,
  ) {
    super(message);
  }
}

interface FileEntry {
  content: Uint8Array;
  ctime: number;
  mtime: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class ProposalStore {
  private readonly files = new Map<string, FileEntry>();
  private readonly changes = new Emitter<StoreChange[]>();
  readonly onDidChange = this.changes.event;

  constructor(
    readonly scheme: string,
    readonly readonly: boolean,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Put a file in place (from the review logic, not from the editor). */
  put(path: string, text: string): void {
    const existed = this.files.has(path);
    const time = this.now();
    this.files.set(path, { content: encoder.encode(text), ctime: this.files.get(path)?.ctime ?? time, mtime: time });
    this.changes.fire([{ type: existed ? 'changed' : 'created', path }]);
  }

  text(path: string): string | undefined {
    const entry = this.files.get(path);
    return entry ? decoder.decode(entry.content) : undefined;
  }

  remove(path: string): void {
    if (this.files.delete(path)) this.changes.fire([{ type: 'deleted', path }]);
  }

  /** Remove every file under a directory (a finished review's files). */
  removeTree(directory: string): void {
    const prefix = directory.endsWith('/') ? directory : `${directory}/`;
    const removed = [...this.files.keys()].filter((path) => path.startsWith(prefix));
    for (const path of removed) this.files.delete(path);
    if (removed.length > 0) this.changes.fire(removed.map((path) => ({ type: 'deleted' as const, path })));
  }

  // -- the file-system side, called by the editor through the adapter ----------------------------------------------

  stat(path: string): EntryStat {
    const entry = this.files.get(path);
    if (entry) return { type: 'file', size: entry.content.byteLength, ctime: entry.ctime, mtime: entry.mtime };
    if (this.isDirectory(path)) return { type: 'directory', size: 0, ctime: 0, mtime: 0 };
    throw new StoreError('FileNotFound', `${this.scheme}:${path} does not exist`);
  }

  readDirectory(path: string): [string, EntryType][] {
    if (!this.isDirectory(path)) throw new StoreError('FileNotADirectory', `${this.scheme}:${path} is not a directory`);
    const prefix = path === '/' ? '/' : `${path.replace(/\/$/, '')}/`;
    const children = new Map<string, EntryType>();
    for (const file of this.files.keys()) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash === -1) children.set(rest, 'file');
      else children.set(rest.slice(0, slash), 'directory');
    }
    return [...children.entries()];
  }

  readFile(path: string): Uint8Array {
    const entry = this.files.get(path);
    if (!entry) {
      throw new StoreError(
        this.isDirectory(path) ? 'FileIsADirectory' : 'FileNotFound',
        `${this.scheme}:${path} does not exist`,
      );
    }
    return entry.content;
  }

  /** A save from the editor. Only existing proposals can be written: the editor cannot create files here. */
  writeFile(path: string, content: Uint8Array, options: { create: boolean; overwrite: boolean }): void {
    this.assertWritable(path);
    const entry = this.files.get(path);
    if (!entry) {
      throw new StoreError(
        options.create ? 'NoPermissions' : 'FileNotFound',
        `${this.scheme}:${path} is not a file under review; toolgate only keeps the files it proposed here`,
      );
    }
    if (!options.overwrite) throw new StoreError('FileExists', `${this.scheme}:${path} already exists`);
    this.files.set(path, { content: content.slice(), ctime: entry.ctime, mtime: Math.max(this.now(), entry.mtime + 1) });
    this.changes.fire([{ type: 'changed', path }]);
  }

  /** Deleting or renaming a proposal from the editor would lose it silently: refused. */
  assertWritable(path: string): void {
    if (this.readonly) throw new StoreError('NoPermissions', `${this.scheme}:${path} is read-only`);
  }

  private isDirectory(path: string): boolean {
    if (path === '/' || path === '') return true;
    const prefix = `${path.replace(/\/$/, '')}/`;
    for (const file of this.files.keys()) if (file.startsWith(prefix)) return true;
    return false;
  }
}

/** Where a review's file lives in a store: `/<reviewId>/<the file's absolute path>`. */
export function reviewPath(reviewId: string, filePath: string): string {
  let normalised = filePath.replaceAll('\\', '/');
  if (!normalised.startsWith('/')) normalised = `/${normalised}`;
  return `/${reviewId}${normalised}`;
}

/**
 * A store path as the editor's URI parts: the review's directory becomes the authority, so that the breadcrumbs and
 * the tab's tooltip show the file's own path, not toolgate's internal id. `storePathOf` is the way back.
 */
export function uriPartsOf(path: string): { authority: string; path: string } {
  const match = /^\/([^/]+)(\/.*)$/.exec(path);
  return match?.[1] && match[2] ? { authority: match[1], path: match[2] } : { authority: '', path };
}

export function storePathOf(uri: { authority?: string; path: string }): string {
  return uri.authority ? `/${uri.authority}${uri.path}` : uri.path;
}

export function reviewIdOf(path: string): string | undefined {
  const match = /^\/([^/]+)\//.exec(path);
  return match?.[1];
}
