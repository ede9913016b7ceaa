/**
 * The chat's sessions: which one is open, opening a new or a stored one, deleting one, the picker's list, and what
 * belongs to the open session (its permission mode, its diff-review policy, its settings banner). The controller
 * (controller.ts) sends the messages; this module answers "which session do they go to".
 */

import type { ChatStore } from './chatStore';
import { failureNotice } from './chatNotices';
import type { Notifier } from '../host';
import type { ExportFormat } from '../shared/messages';
import type { PermissionMode, ReviewEdits, SessionInfo, Settings } from '../protocol';
import { allowsEveryCall } from '../protocol';
import { errorMessage } from '../sidecar/rpc';
import { NotSupported, SidecarUnavailable } from '../sidecar/sidecarClient';
import type { SidecarClient } from '../sidecar/sidecarClient';
import { bannerProblems } from '../settings/permissionFiles';

export interface SessionDeps {
  store: ChatStore;
  client: SidecarClient;
  notifier: Notifier;
  /** The mode a new session starts in (the toolgate.permissions.defaultMode setting). */
  defaultMode: () => PermissionMode;
  /** Whether new sessions review every edit or only those that need approval (the toolgate.diffReview setting). */
  reviewEdits: () => ReviewEdits;
  /** Ask where to save a document and write it there (src/vscode): the path, or undefined when cancelled. */
  saveDocument: (fileName: string, content: string, kind: ExportFormat) => Promise<string | undefined>;
}

export class ChatSessions {
  /** A session being opened (New was pressed, or a message opens one): what a message sent meanwhile belongs to. */
  private starting: Promise<string> | undefined;

  constructor(private readonly deps: SessionDeps) {}

  /** The current session, creating one (in the default mode) when there is none. Throws when that fails. */
  async ensure(): Promise<string> {
    // Not the one still on screen, and not a second new one.
    if (this.starting) return this.starting;
    const current = this.deps.store.state.sessionId;
    if (current) return current;
    return this.opening(this.start());
  }

  /** The session the permission rules belong to: the open one, or a new one. Undefined while no sidecar runs. */
  async forRules(): Promise<string | undefined> {
    try {
      return await this.ensure();
    } catch {
      return undefined;
    }
  }

  /** The sidecar stopped: a session it was opening went down with it, and must not be waited for. */
  forgetOpening(): void {
    this.starting = undefined;
  }

  /** Open a new session (the turn running in the old one is the controller's to interrupt first). */
  async startNew(): Promise<void> {
    try {
      await this.opening(this.start());
    } catch (error) {
      this.report(error);
    }
    await this.refreshList();
  }

  async open(sessionId: string): Promise<void> {
    const { store, client } = this.deps;
    if (sessionId === store.state.sessionId) return;
    try {
      const info = await client.loadSession(sessionId);
      await this.show(info);
    } catch (error) {
      this.report(error);
    }
  }

  /** Draw the open session again from the sidecar's history (after its conversation was cut back). */
  async reload(): Promise<void> {
    const { store } = this.deps;
    const { sessionId, mode, usage } = store.state;
    if (!sessionId) return;
    await this.show({ sessionId, mode });
    // The context line stays: the conversation was drawn again, not changed by a request.
    if (usage && store.state.sessionId === sessionId) store.dispatch({ type: 'event', event: usage, at: 0 });
  }

  async delete(sessionId: string): Promise<void> {
    const { store, client, notifier } = this.deps;
    const session = store.state.sessions.find((candidate) => candidate.sessionId === sessionId);
    const confirmed = await notifier.confirm(
      `Delete the session "${session?.title ?? sessionId}"?`,
      'Its transcript is removed from disk. This cannot be undone.',
      'Delete',
    );
    if (!confirmed) return;
    try {
      await client.deleteSession(sessionId);
      if (store.state.sessionId === sessionId) await this.start();
      await this.refreshList();
    } catch (error) {
      this.report(error);
    }
  }

  /** A title the person chose in the history list (the sidecar keeps it; the first prompt no longer names it). */
  async rename(sessionId: string, title: string): Promise<void> {
    try {
      await this.deps.client.renameSession(sessionId, title);
    } catch (error) {
      this.report(error);
    }
    await this.refreshList();
  }

  /** The history list's search: the sidecar looks through titles and conversations; '' ends the search. */
  async search(query: string): Promise<void> {
    const { store, client } = this.deps;
    const wanted = query.trim();
    if (wanted === '') {
      store.dispatch({ type: 'sessionSearch', search: null });
      return;
    }
    try {
      const { matches } = await client.searchSessions(wanted);
      store.dispatch({ type: 'sessionSearch', search: { query: wanted, matches } });
    } catch (error) {
      this.report(error);
    }
  }

  /** A session as a Markdown or JSON document, saved where the person chooses; the notice says where. */
  async export(sessionId: string, format: ExportFormat): Promise<void> {
    const { store, client } = this.deps;
    try {
      const document = await client.exportSession(sessionId, format);
      const saved = await this.deps.saveDocument(document.fileName, document.content, format);
      if (saved) store.dispatch({ type: 'notice', level: 'info', text: `The session was exported to ${saved}.` });
    } catch (error) {
      this.report(error);
    }
  }

  /**
   * A new sidecar process knows no open session: reopen the one on screen (its files are on disk), or, when that
   * is impossible, let the next message start a new one.
   */
  async reopen(): Promise<void> {
    const { store, client } = this.deps;
    const sessionId = store.state.sessionId;
    if (!sessionId) return;
    try {
      const info = await client.loadSession(sessionId);
      if (store.state.sessionId === sessionId) store.dispatch({ type: 'mode', mode: info.mode });
      await this.refreshSettings();
    } catch (error) {
      if (store.state.sessionId !== sessionId) return;
      store.dispatch({ type: 'sessionClosed' });
      store.dispatch({
        type: 'notice',
        level: 'warning',
        text: `This session could not be reopened in the new sidecar (${errorMessage(error)}). Your next message starts a new session.`,
      });
    }
  }

  /** The picker's list, from the sidecar; marked unavailable when it cannot give one. */
  async refreshList(): Promise<void> {
    const { store, client } = this.deps;
    try {
      const result = await client.listSessions();
      store.dispatch({ type: 'sessions', sessions: result.sessions, available: true });
    } catch (error) {
      store.dispatch({ type: 'sessions', sessions: [], available: false });
      if (!(error instanceof NotSupported) && !(error instanceof SidecarUnavailable)) this.report(error);
    }
  }

  async setMode(mode: PermissionMode): Promise<void> {
    const { store, client } = this.deps;
    try {
      const sessionId = await this.ensure();
      const previous = store.state.mode;
      store.dispatch({ type: 'mode', mode });
      try {
        await client.setMode(sessionId, mode);
      } catch (error) {
        store.dispatch({ type: 'mode', mode: previous });
        throw error;
      }
      if (allowsEveryCall(mode)) {
        store.dispatch({
          type: 'notice',
          level: 'warning',
          text: 'Bypass mode: tool calls in this session run without asking (safety checks still apply).',
        });
      }
    } catch (error) {
      this.report(error);
      // Redraw the switcher with the mode that is really in force.
      store.dispatch({ type: 'mode', mode: store.state.mode });
    }
  }

  /** The toolgate.diffReview setting changed: the open session follows it (new sessions get it at creation). */
  async reviewEditsChanged(): Promise<void> {
    const sessionId = this.deps.store.state.sessionId;
    if (!sessionId) return;
    try {
      await this.deps.client.setReviewEdits(sessionId, this.deps.reviewEdits());
    } catch (error) {
      this.report(error);
    }
  }

  /** The open session's settings as the sidecar reports them: what it could not use goes to the banner. */
  showSettings(settings: Settings): void {
    const { store } = this.deps;
    if (settings.sessionId !== store.state.sessionId) return;
    store.dispatch({ type: 'settingsProblems', problems: bannerProblems(settings.problems) });
    store.dispatch({ type: 'sandbox', sandbox: settings.sandbox ?? null });
  }

  /** Ask the sidecar again which settings problems the open session has. */
  async refreshSettings(): Promise<void> {
    const sessionId = this.deps.store.state.sessionId;
    if (!sessionId) return;
    try {
      this.showSettings(await this.deps.client.getSettings(sessionId));
    } catch {
      // An older sidecar, or none: the banner keeps what it knew. Nothing here is worth a notice.
    }
  }

  /** Draw a session: its settings, and its conversation so far when the sidecar can tell it. */
  private async show(info: Pick<SessionInfo, 'sessionId' | 'mode'>): Promise<void> {
    const { store, client } = this.deps;
    try {
      const history = await client.history(info.sessionId);
      store.dispatch({ type: 'sessionOpened', sessionId: info.sessionId, mode: info.mode, ...history });
    } catch (error) {
      store.dispatch({ type: 'sessionOpened', sessionId: info.sessionId, mode: info.mode, messages: [], todos: [], busy: false });
      if (!(error instanceof NotSupported)) this.report(error);
    }
    await this.refreshSettings();
  }

  /** Remember a session being opened until it is open, for `ensure`. */
  private async opening(starting: Promise<string>): Promise<string> {
    this.starting = starting;
    try {
      return await starting;
    } finally {
      if (this.starting === starting) this.starting = undefined;
    }
  }

  private async start(): Promise<string> {
    const { store, client } = this.deps;
    const mode = this.deps.defaultMode();
    const { sessionId } = await client.newSession(mode, this.deps.reviewEdits());
    store.dispatch({ type: 'sessionOpened', sessionId, mode, messages: [], todos: [], busy: false });
    void this.refreshList(); // the picker lists the new session
    void this.refreshSettings(); // a new session reads the settings files afresh: the banner follows
    return sessionId;
  }

  private report(error: unknown): void {
    this.deps.store.dispatch(failureNotice(error));
  }
}
