import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { Disposable } from '../src/host';
import type { EditorProblem, EditorProblemsResult } from '../src/protocol.generated';
import {
  FIRST_REPORT_MS,
  languageFamily,
  openFilesSetting,
  ProblemsAnswerer,
  QUIET_MS,
  RELOAD_AFTER_MS,
  textDigest,
  waitSecondsSetting,
} from '../src/editor/problems';
import type { ProblemsHost } from '../src/editor/problems';
import { FakeCancellation } from './fakes';

const TS = '/ws/src/main.ts';
const TXT = '/ws/notes.txt';
const error = (line: number, message = "Type 'string' is not assignable to type 'number'."): EditorProblem => ({
  line,
  character: 6,
  severity: 'error',
  message,
  source: 'ts',
  code: '2322',
});

class Listeners<T> {
  private readonly all = new Set<(value: T) => void>();
  add(listener: (value: T) => void): Disposable {
    this.all.add(listener);
    return { dispose: () => this.all.delete(listener) };
  }
  fire(value: T): void {
    for (const listener of [...this.all]) listener(value);
  }
  get size(): number {
    return this.all.size;
  }
}

/** The editor as the answerer sees it: documents on "disk", which an open buffer picks up when told to. */
class FakeEditorHost implements ProblemsHost {
  readonly disk = new Map<string, string>();
  readonly open = new Map<string, string>();
  readonly problems = new Map<string, EditorProblem[]>();
  readonly languages = new Map<string, string>([
    ['.ts', 'typescript'],
    ['.tsx', 'typescriptreact'],
    ['.txt', 'plaintext'],
    ['.md', 'markdown'],
  ]);
  readonly dirty = new Set<string>();
  /** Each reloadDocument call: the path, and whether a tab could be opened for it. */
  readonly reloadCalls: Array<[string, boolean]> = [];
  /** A reload reads the disk (true), or leaves the buffer as it is (false: the editor offers no way to). */
  reloadReadsDisk = true;
  /** Active extensions by id, with the languages they activate on. */
  readonly extensions = new Map<string, string[]>([['vscode.typescript-language-features', ['typescript']]]);
  readonly settings = new Map<string, unknown>();
  readonly diagnosticsChanged = new Listeners<readonly string[]>();
  readonly documentChanged = new Listeners<string>();
  /** Each openDocument call: the path, and whether it was to be shown in a tab. */
  readonly openCalls: Array<[string, boolean]> = [];

  diagnostics(path: string): EditorProblem[] {
    return this.problems.get(path) ?? [];
  }
  allDiagnostics(): Array<[string, EditorProblem[]]> {
    return [...this.problems.entries()].filter(([, list]) => list.length > 0);
  }
  onDiagnosticsChanged(listener: (paths: readonly string[]) => void): Disposable {
    return this.diagnosticsChanged.add(listener);
  }
  async openDocument(path: string, showInTab: boolean): Promise<{ languageId: string; wasOpen: boolean } | undefined> {
    this.openCalls.push([path, showInTab]);
    const text = this.disk.get(path);
    if (text === undefined) return undefined;
    const wasOpen = this.open.has(path);
    if (!wasOpen) this.open.set(path, text);
    return { languageId: this.languageOf(path)!, wasOpen };
  }
  documentText(path: string): string | undefined {
    return this.open.get(path);
  }
  languageOf(path: string): string | undefined {
    return this.languages.get(path.slice(path.lastIndexOf('.')));
  }
  onDocumentChanged(listener: (path: string) => void): Disposable {
    return this.documentChanged.add(listener);
  }
  activeExtensionsOn(languageId: string): string[] {
    return [...this.extensions].filter(([, languages]) => languages.includes(languageId)).map(([id]) => id);
  }
  editorSetting(name: string): unknown {
    return this.settings.get(name);
  }
  openDocuments(): Array<[string, string]> {
    return [...this.open.keys()].map((path) => [path, this.languageOf(path)!]);
  }
  isDirty(path: string): boolean {
    return this.dirty.has(path);
  }
  async reloadDocument(path: string, showInTab: boolean): Promise<void> {
    this.reloadCalls.push([path, showInTab]);
    if (this.reloadReadsDisk) this.reload(path);
  }

  /** The buffer reloads what is on disk. */
  reload(path: string): void {
    this.open.set(path, this.disk.get(path)!);
    this.documentChanged.fire(path);
  }
  /** The language server publishes. */
  publish(path: string, problems: EditorProblem[]): void {
    this.problems.set(path, problems);
    this.diagnosticsChanged.fire([path]);
  }
}

describe('answering toolgate/editor/problems', () => {
  let host: FakeEditorHost;
  let answerer: ProblemsAnswerer;
  let waitSeconds: number;
  let openFiles: boolean;

  beforeEach(() => {
    vi.useFakeTimers();
    host = new FakeEditorHost();
    waitSeconds = 1.5;
    openFiles = true;
    answerer = new ProblemsAnswerer(host, { waitSeconds: () => waitSeconds, openFiles: () => openFiles });
    host.disk.set(TS, 'const x: number = 1\n');
    host.disk.set(TXT, 'hello\n');
  });

  afterEach(() => {
    answerer.dispose();
    vi.useRealTimers();
  });

  /** Resolves the answer, recording when (in fake milliseconds) it came. */
  function timed(promise: Promise<EditorProblemsResult>): { answer: () => EditorProblemsResult | undefined; at: () => number } {
    const start = Date.now();
    let result: EditorProblemsResult | undefined;
    let at = -1;
    void promise.then((value) => {
      result = value;
      at = Date.now() - start;
    });
    return { answer: () => result, at: () => at };
  }

  it('waits for the buffer to hold the written content, then for the problems to settle', async () => {
    host.open.set(TS, host.disk.get(TS)!);
    host.disk.set(TS, "const x: number = 'one'\n");
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest(host.disk.get(TS)!) }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(150);
    expect(pending.answer()).toBeUndefined(); // the buffer still holds the old text
    host.reload(TS);
    await vi.advanceTimersByTimeAsync(200);
    host.publish(TS, [error(0)]); // syntax first …
    await vi.advanceTimersByTimeAsync(200);
    host.publish(TS, [error(0), error(0, 'another')]); // … then the semantic pass
    await vi.advanceTimersByTimeAsync(QUIET_MS - 1);
    expect(pending.answer()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(pending.answer()).toEqual({
      files: [{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(0), error(0, 'another')] }],
      waitedSeconds: 1.5,
    });
    expect(pending.at()).toBe(150 + 200 + 200 + QUIET_MS);
    expect(host.diagnosticsChanged.size).toBe(1); // only the answerer's own tracking stays subscribed
  });

  it('counts a language server it has heard from that stays silent for FIRST_REPORT_MS as settled', async () => {
    host.open.set('/ws/src/other.ts', '');
    host.publish('/ws/src/other.ts', []); // the TypeScript server is up: it reported (nothing) for another file
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x: number = 1\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(FIRST_REPORT_MS);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [] }]);
    expect(pending.at()).toBe(FIRST_REPORT_MS);
  });

  it('gives a language server it has not heard from yet the whole wait to report on a change', async () => {
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x: number = 1\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(1200); // still loading the project …
    expect(pending.answer()).toBeUndefined();
    host.publish(TS, [error(0)]);
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(0)] }]);
  });

  it('asked for a baseline (not patiently), gives a server not heard from only FIRST_REPORT_MS', async () => {
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: true, patient: false }));
    await vi.advanceTimersByTimeAsync(FIRST_REPORT_MS);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: false, problems: [] }]);
  });

  it('takes silence until the end of the wait as settled, and says no language server was heard from', async () => {
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x: number = 1\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(1500);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: false, problems: [] }]);
    expect(pending.at()).toBe(1500);
  });

  it('counts a report on another file of the language during the wait as hearing from its server', async () => {
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x: number = 1\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(1200); // the server was loading its project …
    host.open.set('/ws/src/other.ts', '');
    host.publish('/ws/src/other.ts', []); // … and is up now, with nothing to say about this file
    await vi.advanceTimersByTimeAsync(300);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [] }]);
  });

  it('with the openFiles setting off, asks the editor to load a file without showing it in a tab', async () => {
    openFiles = false;
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(400);
    host.publish(TS, [error(0)]);
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(host.openCalls).toEqual([[TS, false]]);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(0)] }]);
  });

  it('says it did not settle when the buffer never holds the content within the wait', async () => {
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('something else') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(1500);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: false, loaded: false, heardFromServer: false, problems: [] }]);
    expect(pending.at()).toBe(1500);
  });

  it('asks the editor to reload a clean buffer that has not taken the written content RELOAD_AFTER_MS in', async () => {
    host.open.set('/ws/src/other.ts', '');
    host.publish('/ws/src/other.ts', []); // the server is up
    host.open.set(TS, host.disk.get(TS)!);
    host.disk.set(TS, "const x: number = 'one'\n"); // written; the editor's file watcher never reports it
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest(host.disk.get(TS)!) }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(RELOAD_AFTER_MS - 1);
    expect(host.reloadCalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(host.reloadCalls).toEqual([[TS, true]]);
    expect(host.open.get(TS)).toBe(host.disk.get(TS));
    host.publish(TS, [error(0)]);
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(0)] }]);
    expect(host.reloadCalls).toHaveLength(1);
  });

  it('says the content was never loaded when the buffer does not take it even after the reload', async () => {
    host.reloadReadsDisk = false;
    openFiles = false;
    host.open.set(TS, 'const x: number = 1\n');
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x = 2\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(1500);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: false, loaded: false, heardFromServer: false, problems: [] }]);
    expect(host.reloadCalls).toEqual([[TS, false]]); // asked once, opening no tab (the setting is off)
  });

  it('never asks to reload a buffer with unsaved changes: they are the person\'s edits', async () => {
    host.open.set(TS, 'const x: number = 1 // typing\n');
    host.dirty.add(TS);
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x: number = 1\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(1500);
    expect(pending.answer()?.files[0]).toMatchObject({ settled: false, loaded: false });
    expect(host.reloadCalls).toEqual([]);
    expect(host.open.get(TS)).toBe('const x: number = 1 // typing\n');
  });

  it("counts a report on a .tsx file as hearing the .ts file's server (one server covers the family)", async () => {
    host.open.set('/ws/src/view.tsx', '');
    host.publish('/ws/src/view.tsx', []);
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: textDigest('const x: number = 1\n') }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(FIRST_REPORT_MS);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [] }]);
    expect(pending.at()).toBe(FIRST_REPORT_MS); // not the whole wait a server not heard from gets
  });

  it('says it did not settle when the problems keep changing until the wait runs out', async () => {
    waitSeconds = 0.5;
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: true, patient: true }));
    for (let i = 0; i < 5; i += 1) {
      host.publish(TS, [error(i)]);
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(pending.answer()?.files[0]).toMatchObject({ settled: false, problems: [error(4)] });
    expect(pending.answer()?.waitedSeconds).toBe(0.5);
  });

  it('does not wait for a file no diagnostics source is known for', async () => {
    const answer = await answerer.answer({ files: [{ path: TXT, contentSha256: textDigest('hello\n') }], wait: true, patient: true });
    expect(answer.files).toEqual([{ path: TXT, covered: false, settled: true, loaded: true, heardFromServer: false, problems: [] }]);
  });

  it('does not wait for a language whose only extensions report nothing unless a setting turns that on', async () => {
    const readme = '/ws/README.md';
    host.disk.set(readme, '# Notes\n');
    host.extensions.set('vscode.markdown-language-features', ['markdown']);
    host.extensions.set('vscode.extension-editing', ['markdown', 'json']);
    const ask = () => answerer.answer({ files: [{ path: readme, contentSha256: textDigest('# Notes\n') }], wait: true, patient: true });
    // Answered at once, without "no server has reported yet": markdown's validation is off by default.
    expect((await ask()).files[0]).toMatchObject({ covered: false, settled: true, heardFromServer: false });
    host.settings.set('markdown.validate.enabled', true);
    const pending = timed(ask());
    await vi.advanceTimersByTimeAsync(waitSeconds * 1000);
    expect(pending.answer()?.files[0]).toMatchObject({ covered: true, settled: true, heardFromServer: false });
  });

  it('learns that a language is covered once a file of it had problems', async () => {
    host.extensions.clear();
    host.open.set(TS, host.disk.get(TS)!);
    expect((await answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: false, patient: false })).files[0]!.covered).toBe(false);
    host.publish(TS, [error(0)]);
    host.publish(TS, []);
    expect((await answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: false, patient: false })).files[0]!.covered).toBe(true);
  });

  it('answers at once for a document that was open already when no new content is named', async () => {
    host.open.set(TS, host.disk.get(TS)!);
    host.problems.set(TS, [error(0)]);
    const answer = await answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: true, patient: true });
    expect(answer.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(0)] }]);
  });

  it('opens a document it did not have open and lets its language server look first', async () => {
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: null }], wait: true, patient: true }));
    await vi.advanceTimersByTimeAsync(400);
    host.publish(TS, [error(0)]);
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(host.open.has(TS)).toBe(true);
    expect(host.openCalls).toEqual([[TS, true]]);
    expect(pending.answer()?.files).toEqual([{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(0)] }]);
  });

  it('answers a file that cannot be opened as not covered', async () => {
    const answer = await answerer.answer({ files: [{ path: '/ws/gone.ts', contentSha256: 'x' }], wait: true, patient: true });
    expect(answer.files).toEqual([{ path: '/ws/gone.ts', covered: false, settled: true, loaded: true, heardFromServer: false, problems: [] }]);
  });

  it('stops waiting when the sidecar withdraws the question', async () => {
    const token = new FakeCancellation();
    const pending = timed(answerer.answer({ files: [{ path: TS, contentSha256: 'never' }], wait: true, patient: true }, token));
    await vi.advanceTimersByTimeAsync(100);
    token.cancel();
    await vi.advanceTimersByTimeAsync(0);
    expect(pending.answer()?.files[0]).toMatchObject({ settled: false });
    expect(pending.at()).toBe(100);
  });

  it('lists an open file of a language whose server has not been heard from with the workspace, as not heard', async () => {
    host.problems.set(TS, [error(2)]);
    host.open.set('/ws/src/b.ts', '');
    host.open.set(TXT, 'hello\n'); // no source covers plain text: nothing to hear
    const answer = await answerer.answer({ files: null, wait: false, patient: false });
    expect(answer.files).toEqual([
      { path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(2)] },
      { path: '/ws/src/b.ts', covered: true, settled: true, loaded: true, heardFromServer: false, problems: [] },
    ]);
    host.open.set('/ws/src/view.tsx', '');
    host.publish('/ws/src/view.tsx', []); // now its server has reported: an empty list means something
    expect((await answerer.answer({ files: null, wait: false, patient: false })).files.map((file) => file.path)).toEqual([TS]);
  });

  it('lists every file with problems for the workspace, without waiting', async () => {
    host.problems.set(TS, [error(2)]);
    host.problems.set('/ws/clean.ts', []);
    const answer = await answerer.answer({ files: null, wait: false, patient: false });
    expect(answer).toEqual({
      files: [{ path: TS, covered: true, settled: true, loaded: true, heardFromServer: true, problems: [error(2)] }],
      waitedSeconds: 0,
    });
  });
});

describe('the waitSeconds setting and the content digest', () => {
  it('tracks the languages of the built-in TypeScript features as one, and any other language as itself', () => {
    for (const language of ['typescript', 'typescriptreact', 'javascript', 'javascriptreact']) {
      expect(languageFamily(language)).toBe('typescript');
    }
    expect(languageFamily('python')).toBe('python');
  });


  it('takes 0.1 to 30 seconds and falls back to the default otherwise', () => {
    expect(waitSecondsSetting(0)).toBe(1.5);
    expect(waitSecondsSetting(0.01)).toBe(0.1);
    expect(waitSecondsSetting(4)).toBe(4);
    expect(waitSecondsSetting(99)).toBe(30);
    expect(waitSecondsSetting(-1)).toBe(1.5);
    expect(waitSecondsSetting('2')).toBe(1.5);
    expect(waitSecondsSetting(undefined)).toBe(1.5);
  });

  it('opens files unless openFiles is set to false', () => {
    expect(openFilesSetting(undefined)).toBe(true);
    expect(openFilesSetting(true)).toBe(true);
    expect(openFilesSetting(false)).toBe(false);
    expect(openFilesSetting('false')).toBe(true);
  });

  it('digests text the way the sidecar does: UTF-8 with LF line endings (values from core/editor_problems.py)', () => {
    expect(textDigest('a\r\nb\r\n')).toBe('911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2');
    expect(textDigest('const s = "😀é"\r\n')).toBe('a3fbeb85563776f2609f474f2ef105b4b51476b4a27ca279823df360815495a2');
  });
});
