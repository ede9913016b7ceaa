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
 * Languages one server covers count together (LANGUAGE_FAMILIES): a report on a `.tsx` file is TypeScript's server
 * heard for a `.ts` file too.
 *
 * The editor reloads a clean buffer when its file watcher reports the change on disk; when that report has not come
 * RELOAD_AFTER_MS into the wait, the answerer asks the editor to read the document again (never a dirty one: that
 * would drop the person's unsaved edits). A buffer that still never held the content is answered `loaded: false`.
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
/** A clean buffer that does not hold the content this long into the wait is asked to read its file again. */
export const RELOAD_AFTER_MS = 1000;

/**
 * Languages one language server covers, which count as one for "heard from" and "reports": VS Code names a `.tsx` file
 * typescriptreact and a `.ts` file typescript, yet its built-in TypeScript features check both (and JavaScript). Add a
 * row for another server that covers several languages.
 */
export const LANGUAGE_FAMILIES: ReadonlyArray<readonly string[]> = [
  ['typescript', 'typescriptreact', 'javascript', 'javascriptreact'],
];

const FAMILY_OF = new Map(
  LANGUAGE_FAMILIES.flatMap((family) => family.map((language) => [language, family[0]!] as const)),
);

/** The name a language is tracked under: its family's first language, or itself when it has no family. */
export function languageFamily(languageId: string): string {
  return FAMILY_OF.get(languageId) ?? languageId;
}

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
  /** Every file-system document the editor has open (in a tab or only loaded), with its language. */
  openDocuments(): Array<[string, string]>;
  /** The open document has changes not saved to disk. */
  isDirty(path: string): boolean;
  /**
   * Asks the editor to read an open, clean document again from disk (its file watcher may not have reported a change
   * yet). Never for a dirty document, never writing the file; opens no tab unless `showInTab`. Does nothing when the
   * editor offers no way to.
   */
  reloadDocument(path: string, showInTab: boolean): Promise<void>;
  onDocumentChanged(listener: (path: string) => void): Disposable;
  /** The ids of the active extensions that activate on this language (some may report problems for it). */
  activeExtensionsOn(languageId: string): string[];
  /** A setting of the editor's (not toolgate's), by its full name; undefined when unset. */
  editorSetting(name: string): unknown;
}

/**
 * Extensions that activate on a language but report no problems for it unless a setting turns that on (null: they
 * never do). Their activation is no sign a language server will report: counted as one, every edit of a README waited
 * out the whole wait and told the model no server had reported "yet". Markdown's link validation is off by default;
 * extension-editing reports only on an extension's own manifest.
 */
export const SILENT_UNLESS: Readonly<Record<string, Readonly<Record<string, string | null>>>> = {
  'vscode.markdown-language-features': { markdown: 'markdown.validate.enabled' },
  'vscode.extension-editing': { markdown: null, json: null },
};

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

/** How waiting for a file ended: `loaded` false when its buffer never held the content asked for. */
interface Settling {
  settled: boolean;
  loaded: boolean;
}

/** A file answered without waiting: what is reported stands, for the content the buffer has. */
const AT_ONCE: Settling = { settled: true, loaded: true };

export class ProblemsAnswerer implements Disposable {
  /** Language families some file of which had problems reported in this window: a source covers them for sure. */
  private readonly reportingLanguages = new Set<string>();
  /** Language families whose diagnostics changed at all in this window: their server is up, its silence counts. */
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
    if (params.files === null) return { files: this.workspaceAnswer(), waitedSeconds };
    const deadline = this.now() + waitedSeconds * 1000;
    const files = await Promise.all(params.files.map((file) => this.fileAnswer(file, params, deadline, token)));
    return { files, waitedSeconds };
  }

  dispose(): void {
    this.subscription.dispose();
  }

  /**
   * Every file with problems, and every open file with none whose language's server has not been heard from (its
   * empty list may only mean the server is still starting: the sidecar says so).
   */
  private workspaceAnswer(): FileProblemsAnswer[] {
    const listed = (path: string, heardFromServer: boolean, problems: EditorProblem[]): FileProblemsAnswer => ({
      path,
      covered: true,
      ...AT_ONCE,
      heardFromServer,
      problems,
    });
    const reported = this.host.allDiagnostics().map(([path, problems]) => listed(path, true, problems));
    const named = new Set(reported.map((file) => file.path));
    const unheard = this.host
      .openDocuments()
      .filter(([path, languageId]) => !named.has(path) && this.covers(languageId) && !this.heard(languageId))
      .map(([path]) => listed(path, false, []));
    return [...reported, ...unheard];
  }

  private noteReported(path: string): void {
    const language = this.host.languageOf(path);
    if (language === undefined) return;
    this.heardFrom.add(languageFamily(language));
    if (this.host.diagnostics(path).length > 0) this.reportingLanguages.add(languageFamily(language));
  }

  private heard(languageId: string): boolean {
    return this.heardFrom.has(languageFamily(languageId));
  }

  /**
   * Some source reports problems for this language: it did in this window, or an extension that reports on it is
   * active (one that activates on it but is silent unless a setting is on counts only with that setting on).
   */
  private covers(languageId: string): boolean {
    if (this.reportingLanguages.has(languageFamily(languageId))) return true;
    return this.host.activeExtensionsOn(languageId).some((id) => {
      const setting = SILENT_UNLESS[id]?.[languageId];
      return setting === undefined || (setting !== null && this.host.editorSetting(setting) === true);
    });
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
    const answer = (covered: boolean, { settled, loaded }: Settling = AT_ONCE): FileProblemsAnswer => {
      const problems = this.host.diagnostics(path);
      const heardFromServer = opened !== undefined && (problems.length > 0 || this.heard(opened.languageId));
      return { path, covered, settled, loaded, heardFromServer, problems };
    };
    if (opened === undefined) return answer(false);
    const covered = this.covers(opened.languageId) || this.host.diagnostics(path).length > 0;
    if (!covered) return answer(false);
    // An open document with no new content to wait for has been looked at already: what is reported stands.
    const expected = file.contentSha256 ?? null;
    if (!params.wait || (opened.wasOpen && expected === null)) return answer(true);
    const firstReport = params.patient && !this.heard(opened.languageId) ? Infinity : FIRST_REPORT_MS;
    return answer(true, await this.settle(path, expected, firstReport, deadline, token));
  }

  /** The buffer has not taken the file's new content: the editor is asked to read it again, unless it is dirty. */
  private reloadIfClean(path: string): void {
    if (this.host.documentText(path) === undefined || this.host.isDirty(path)) return;
    void this.host.reloadDocument(path, this.settings.openFiles()).catch(() => undefined);
  }

  /**
   * Settled once the document holds `expected` (null: any content) and its problems stopped changing (or never changed
   * for `firstReport` ms). At the deadline: settled only when they stayed silent since the content arrived; not loaded
   * when the content never arrived. A clean buffer still without it RELOAD_AFTER_MS in is asked to reload, once.
   */
  private settle(
    path: string,
    expected: string | null,
    firstReport: number,
    deadline: number,
    token?: CancellationLike,
  ): Promise<Settling> {
    const start = this.now();
    let reloadAsked = false;
    let textSince: number | undefined;
    let lastChange: number | undefined;
    const holdsExpected = (): boolean => {
      if (expected === null) return true;
      const text = this.host.documentText(path);
      return text !== undefined && textDigest(text) === expected;
    };
    const step = (at: number): Step => {
      if (textSince === undefined) {
        if (!holdsExpected()) {
          if (!reloadAsked && at - start >= RELOAD_AFTER_MS) {
            reloadAsked = true;
            this.reloadIfClean(path);
          }
          return TEXT_POLL_MS;
        }
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
    return new Promise<Settling>((resolve) => {
      const subscriptions: Disposable[] = [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      let finished = false;
      const finish = (settled: boolean): void => {
        if (finished) return;
        finished = true;
        if (timer !== undefined) clearTimeout(timer);
        for (const subscription of subscriptions) subscription.dispose();
        resolve({ settled, loaded: textSince !== undefined });
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
