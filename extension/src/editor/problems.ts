/**
 * Answers the sidecar's `toolgate/editor/problems`: what the editor's language servers report for some files (or for
 * the whole workspace). The sidecar decides what the model is shown; this module only says what the editor knows,
 * and when it is worth waiting for.
 *
 * Language servers push their problems and never say "done", so settling is read from the outside, for each file:
 *   1. the file is opened, in a preview tab that does not take the focus (TypeScript's server checks only files
 *      shown in tabs), so that a language server covers it; with `toolgate.problems.openFiles` off it is only
 *      loaded, never shown (no tab opens, and some servers will not report on it);
 *   2. when the sidecar names a content (after it wrote the file), the document's text must become that content
 *      first (the editor reloads a clean buffer when the file changes on disk);
 *   3. then the problems must stop changing: QUIET_MS after the last change, or FIRST_REPORT_MS when none comes (a
 *      change that leaves a clean file clean is not reported at all). Until a language's server has been heard from
 *      in this window (it may still be loading the project), its silence is trusted only at the end of the wait when
 *      the sidecar asks patiently (after an edit, the Problems tool; not the baseline before an edit).
 * All of it within the `toolgate.problems.waitSeconds` setting. Silence until the end of the wait counts as settled
 * (nothing new to say); a buffer that never held the content, or problems still changing, do not. A file whose
 * language no diagnostics source is known for (none reported for it or its language, and no active extension
 * activates on its language) is not waited for. Each answer says whether a language server has been heard from for
 * the file's language at all (`heardFromServer`): a cold server silent for the whole wait is not "no problems".
 */

import { createHash } from 'node:crypto';

import type { CancellationLike, Disposable } from '../host';
import type { EditorProblem, EditorProblemsParams, EditorProblemsResult, FileProblemsAnswer, ProblemsFileRequest } from '../protocol.generated';

export const DEFAULT_WAIT_SECONDS = 1.5;
export const MAX_WAIT_SECONDS = 30;
/** Problems that stopped changing for this long have settled. */
export const QUIET_MS = 300;
/** How long a language server gets to start reporting on a new content before its silence counts as "nothing new". */
export const FIRST_REPORT_MS = 1000;
/** While waiting for the editor to hold a content, it is looked at this often too (besides its change events). */
const TEXT_POLL_MS = 100;

/** The editor's side of it: src/vscode/problemsVscode.ts. Paths are absolute file-system paths. */
export interface ProblemsHost {
  diagnostics(path: string): EditorProblem[];
  /** Every file the editor has problems for now. */
  allDiagnostics(): Array<[string, EditorProblem[]]>;
  onDiagnosticsChanged(listener: (paths: readonly string[]) => void): Disposable;
  /**
   * Opens the file unless it is in a tab (wasOpen): shown in a tab when `showInTab`, else only loaded. Undefined when it
   * cannot be opened (binary, too large, gone).
   */
  openDocument(path: string, showInTab: boolean): Promise<{ languageId: string; wasOpen: boolean } | undefined>;
  /** The text of an open document; undefined when it is not open. */
  documentText(path: string): string | undefined;
  /** The language of an open document; undefined when it is not open. */
  languageOf(path: string): string | undefined;
  onDocumentChanged(listener: (path: string) => void): Disposable;
  /** An active extension activates on this language (it may report problems for it). */
  languageHasActiveExtension(languageId: string): boolean;
}

/** The same digest the sidecar computes (core/editor_problems.py): SHA-256 of the UTF-8 text with LF line endings. */
export function textDigest(text: string): string {
  return createHash('sha256').update(text.replace(/\r\n/g, '\n'), 'utf8').digest('hex');
}

export const MIN_WAIT_SECONDS = 0.1;

/** The settings the answerer reads at each question. */
export interface ProblemsSettings {
  waitSeconds(): number;
  /** Show a file in a preview tab to get it checked (toolgate.problems.openFiles). */
  openFiles(): boolean;
}

/** The setting, checked: seconds from MIN_WAIT_SECONDS to MAX_WAIT_SECONDS; anything else is the default. */
export function waitSecondsSetting(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0) return DEFAULT_WAIT_SECONDS;
  return Math.min(Math.max(raw, MIN_WAIT_SECONDS), MAX_WAIT_SECONDS);
}

/** The setting, checked: only an explicit false turns opening files off. */
export function openFilesSetting(raw: unknown): boolean {
  return raw !== false;
}

type Step = 'done' | number;

export class ProblemsAnswerer implements Disposable {
  /** Languages some file of which had problems reported in this window: a source covers them for sure. */
  private readonly reportingLanguages = new Set<string>();
  /** Languages whose diagnostics changed at all in this window: their server is up, its silence means something. */
  private readonly heardFrom = new Set<string>();
  private readonly subscription: Disposable;

  constructor(
    private readonly host: ProblemsHost,
    private readonly settings: ProblemsSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.subscription = host.onDiagnosticsChanged((paths) => {
      for (const path of paths) this.noteReported(path);
    });
    for (const [path] of host.allDiagnostics()) this.noteReported(path);
  }

  async answer(params: EditorProblemsParams, token?: CancellationLike): Promise<EditorProblemsResult> {
    const waitedSeconds = params.wait ? this.settings.waitSeconds() : 0;
    if (params.files === null) {
      const files = this.host
        .allDiagnostics()
        .map(([path, problems]) => ({ path, covered: true, settled: true, heardFromServer: true, problems }));
      return { files, waitedSeconds };
    }
    const deadline = this.now() + waitedSeconds * 1000;
    const files = await Promise.all(params.files.map((file) => this.fileAnswer(file, params, deadline, token)));
    return { files, waitedSeconds };
  }

  dispose(): void {
    this.subscription.dispose();
  }

  private noteReported(path: string): void {
    const language = this.host.languageOf(path);
    if (language === undefined) return;
    this.heardFrom.add(language);
    if (this.host.diagnostics(path).length > 0) this.reportingLanguages.add(language);
  }

  private async fileAnswer(
    file: ProblemsFileRequest,
    params: EditorProblemsParams,
    deadline: number,
    token?: CancellationLike,
  ): Promise<FileProblemsAnswer> {
    const { path } = file;
    const opened = await this.host.openDocument(path, this.settings.openFiles());
    // Read when answering, after any wait: a report during the wait (for this file or another of its language) counts.
    const answer = (covered: boolean, settled: boolean): FileProblemsAnswer => {
      const problems = this.host.diagnostics(path);
      const heardFromServer = opened !== undefined && (problems.length > 0 || this.heardFrom.has(opened.languageId));
      return { path, covered, settled, heardFromServer, problems };
    };
    if (opened === undefined) return answer(false, true);
    const covered =
      this.reportingLanguages.has(opened.languageId) ||
      this.host.diagnostics(path).length > 0 ||
      this.host.languageHasActiveExtension(opened.languageId);
    if (!covered) return answer(false, true);
    // An open document with no new content to wait for has been looked at already: what is reported stands.
    const expected = file.contentSha256 ?? null;
    if (!params.wait || (opened.wasOpen && expected === null)) return answer(true, true);
    const firstReport = params.patient && !this.heardFrom.has(opened.languageId) ? Infinity : FIRST_REPORT_MS;
    return answer(true, await this.settle(path, expected, firstReport, deadline, token));
  }

  /**
   * True once the document holds `expected` (null: any content) and its problems stopped changing (or never changed
   * for `firstReport` ms). At the deadline: true only when they stayed silent since the content arrived.
   */
  private settle(
    path: string,
    expected: string | null,
    firstReport: number,
    deadline: number,
    token?: CancellationLike,
  ): Promise<boolean> {
    let textSince: number | undefined;
    let lastChange: number | undefined;
    const holdsExpected = (): boolean => {
      if (expected === null) return true;
      const text = this.host.documentText(path);
      return text !== undefined && textDigest(text) === expected;
    };
    const step = (at: number): Step => {
      if (textSince === undefined) {
        if (!holdsExpected()) return TEXT_POLL_MS;
        textSince = at;
      }
      if (lastChange !== undefined && lastChange >= textSince) {
        const quiet = at - lastChange;
        return quiet >= QUIET_MS ? 'done' : QUIET_MS - quiet;
      }
      const silent = at - textSince;
      return silent >= firstReport ? 'done' : firstReport - silent;
    };
    const silentSinceText = (): boolean => textSince !== undefined && (lastChange === undefined || lastChange < textSince);
    return new Promise<boolean>((resolve) => {
      const subscriptions: Disposable[] = [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      let finished = false;
      const finish = (settled: boolean): void => {
        if (finished) return;
        finished = true;
        if (timer !== undefined) clearTimeout(timer);
        for (const subscription of subscriptions) subscription.dispose();
        resolve(settled);
      };
      const evaluate = (): void => {
        if (finished) return;
        const at = this.now();
        const next = step(at);
        if (next === 'done') return finish(true);
        if (at >= deadline) return finish(silentSinceText());
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(evaluate, Math.max(1, Math.min(next, deadline - at)));
      };
      subscriptions.push(
        this.host.onDiagnosticsChanged((paths) => {
          if (!paths.includes(path)) return;
          lastChange = this.now();
          evaluate();
        }),
        this.host.onDocumentChanged((changed) => {
          if (changed === path && textSince === undefined) evaluate();
        }),
      );
      if (token) {
        if (token.isCancellationRequested) return finish(false);
        subscriptions.push(token.onCancellationRequested(() => finish(false)));
      }
      evaluate();
    });
  }
}
