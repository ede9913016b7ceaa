/**
 * The chat's behaviour: what a message from the webview does, how a message is sent (or kept while the sidecar
 * starts), and how sidecar events reach the chat state. Which session a message goes to is ChatSessions'
 * (chatSessions.ts). Everything the sidecar is asked goes through SidecarClient; everything shown goes through ChatStore.
 */

import type { ApprovalBroker } from '../review/approvals';
import type { Timers } from '../host';
import type { ChatEventParams, ProviderConfigureParams, ToolProgressParams } from '../protocol';
import type { ReviewController } from '../review/reviews';
import type { SettingsChange } from '../settings/settings';
import type { ProviderStatus, SidecarStatus } from '../shared/chatModel';
import type { Attachment } from '../shared/composer';
import type { ViewMessage } from '../shared/messages';
import type { SidecarState } from '../sidecar/sidecar';
import { NotSupported, SidecarUnavailable } from '../sidecar/sidecarClient';
import { STOP_NOTICES, connectionLost, crashNotice, failureNotice, sidecarStatus } from './chatNotices';
import { ChatSessions } from './chatSessions';
import type { SessionDeps } from './chatSessions';

export interface ControllerDeps extends SessionDeps {
  approvals: ApprovalBroker;
  reviews: ReviewController;
  timers: Timers;
  /** The model settings for `toolgate/provider/configure`. */
  providerConfiguration: () => ProviderConfigureParams;
  /** Whether an API key is known to the editor (for the status line while no sidecar runs). */
  hasStoredKey: () => boolean;
  /** Start a new sidecar process (for a settings change only a new process can take). */
  restartSidecar: () => Promise<void>;
  log: (line: string) => void;
}

export class ChatController {
  /** The open session, and opening, listing and deleting sessions. */
  readonly sessions: ChatSessions;
  private sending = false;
  private wasRunning = false;
  /** The sidecar state last seen: a start-up that another state overtook does not announce "ready". */
  private sidecarState: SidecarState | undefined;
  /** Bumped whenever the sidecar stops: a request made before then cannot be answered any more. */
  private epoch = 0;
  /** A turn's request failed because its sidecar died, before the manager said so. */
  private lostTurn = false;
  /** The open session was compacted during the turn: once it ends, it is drawn again with the old turns marked. */
  private compacted = false;
  /** Messages typed while the sidecar was starting; sent (as one) once it is ready. */
  private queued: string[] = [];
  /** What was attached to the queued messages. */
  private queuedAttachments: Attachment[] = [];

  constructor(private readonly deps: ControllerDeps) {
    this.sessions = new ChatSessions(deps);
    deps.client.onChatEvent((params) => this.chatEvent(params));
    deps.client.onToolProgress((params) => this.toolProgress(params));
  }

  /** Follow the sidecar: show its status, note outages and recoveries in the transcript. */
  sidecarChanged(state: SidecarState): void {
    const { store } = this.deps;
    this.sidecarState = state;
    if (state.kind !== 'running') this.epoch++;
    if (state.kind === 'running') {
      // "Ready" means a message sent now is answered: only once the new process knows the model and the session.
      store.dispatch({ type: 'sidecar', status: { state: 'starting', detail: 'Connecting to the sidecar…' } });
      if (state.recovered) store.dispatch({ type: 'notice', level: 'info', text: 'The sidecar is running again.' });
      this.wasRunning = true;
      // A new process knows nothing yet: tell it the model, reopen the session on screen, list the rest.
      void this.configureProvider()
        .then(() => this.sessions.reopen())
        .then(() => {
          if (this.sidecarState !== state) return;
          store.dispatch({ type: 'sidecar', status: sidecarStatus(state) });
          void this.sendQueued();
          return this.sessions.refreshList();
        });
      return;
    }
    store.dispatch({ type: 'sidecar', status: sidecarStatus(state) });
    if (this.wasRunning && (state.kind === 'restarting' || state.kind === 'failed')) {
      // Whatever was in flight died with the process: end its cards, close its prompts, and say so.
      this.wasRunning = false;
      const turnEnded = store.state.busy || this.sending || this.lostTurn;
      this.lostTurn = false;
      store.dispatch({ type: 'turnAborted', reason: 'the sidecar stopped', at: this.deps.timers.now() });
      this.deps.approvals.cancelAll();
      this.deps.reviews.cancelAll();
      store.dispatch({ type: 'notice', level: 'error', text: crashNotice(state, turnEnded) });
    }
    if (state.kind === 'stopped' && (store.state.busy || this.sending)) {
      // A deliberate stop (a restart, or a settings change that needs a new process) ends the turn all the same.
      store.dispatch({ type: 'turnAborted', reason: 'the sidecar was stopped', at: this.deps.timers.now() });
      this.deps.approvals.cancelAll();
      this.deps.reviews.cancelAll();
      store.dispatch({
        type: 'notice',
        level: 'warning',
        text:
          'The sidecar was stopped to be restarted (by you, or for a settings change that needs a new one), which ' +
          'ended the turn that was running. Send your message again once the top of the chat says ready.',
      });
    }
    if (state.kind === 'stopped' || state.kind === 'unavailable') this.wasRunning = false;
    // (Not running, here.) The message in flight, and a session being opened, went down with the process: the next
    // message must not wait for an answer that may never come (the old connection does not always reject its
    // pending requests).
    this.sending = false;
    this.sessions.forgetOpening();
  }

  async handle(message: ViewMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        return; // the view sends the snapshot itself
      case 'send':
        return this.send(message.text, message.attachments);
      case 'interrupt':
        return this.interrupt();
      case 'newSession':
        return this.newSession();
      case 'openSession':
        return this.sessions.open(message.sessionId);
      case 'deleteSession':
        return this.sessions.delete(message.sessionId);
      case 'renameSession':
        return this.sessions.rename(message.sessionId, message.title);
      case 'searchSessions':
        return this.sessions.search(message.query);
      case 'exportSession':
        return this.sessions.export(message.sessionId, message.format);
      case 'setMode':
        return this.sessions.setMode(message.mode);
      case 'approval':
        await this.deps.approvals.answer(message.id, message.choice);
        return;
      case 'review':
        if (message.decision === 'accept') return this.deps.reviews.accept(message.id);
        if (message.decision === 'acceptEdits') return this.deps.reviews.acceptAndAcceptEdits(message.id);
        return this.deps.reviews.reject(message.id, message.feedback);
      case 'showReview':
        return this.deps.reviews.show(message.id, message.path, true);
      default:
        return; // the buttons for the host (restart, open a file, …) are commands: Commands.viewMessage
    }
  }

  async send(text: string, attachments: readonly Attachment[] = []): Promise<void> {
    const compact = /^\/compact(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (compact) return this.compact(compact[1]?.trim() || null);
    const { store } = this.deps;
    const sidecar = store.state.sidecar.state;
    if (sidecar === 'starting' || sidecar === 'restarting') {
      // It will be ready in a moment: keep the message, on screen, and send it then.
      this.queued.push(text);
      this.queuedAttachments.push(...attachments);
      store.dispatch({ type: 'userMessage', text, queued: true });
      return;
    }
    return this.deliver(text, false, attachments);
  }

  /** What was typed while the sidecar started, as one message (the person wrote it in one go, waiting). */
  private async sendQueued(): Promise<void> {
    if (this.queued.length === 0) return;
    const { store } = this.deps;
    const text = this.queued.splice(0).join('\n\n');
    const attachments = this.queuedAttachments.splice(0);
    try {
      await this.sessions.ensure();
    } catch (error) {
      store.dispatch({ type: 'queueSent' });
      this.report(error);
      return;
    }
    // A session opened just now starts with an empty transcript: the message is then drawn again, as sent.
    const stillShown = store.state.items.some((item) => item.kind === 'user' && item.queued);
    store.dispatch({ type: 'queueSent' });
    await this.deliver(text, stillShown, attachments);
  }

  private async deliver(text: string, shown: boolean, attachments: readonly Attachment[] = []): Promise<void> {
    const { store, client } = this.deps;
    if (store.state.busy || this.sending) {
      store.dispatch({ type: 'notice', level: 'warning', text: 'A turn is still running: wait for it, or press Escape to interrupt it.' });
      return;
    }
    this.sending = true;
    const sentIn = this.epoch;
    try {
      let sessionId: string;
      try {
        sessionId = await this.sessions.ensure();
      } catch (error) {
        // Keep the prompt on screen, with the reason it went nowhere.
        if (!shown) store.dispatch({ type: 'userMessage', text });
        this.report(error);
        return;
      }
      if (!shown) store.dispatch({ type: 'userMessage', text });
      store.dispatch({ type: 'busy', busy: true });
      const epoch = this.epoch;
      try {
        const result = await client.send(sessionId, text, attachments);
        const ending = STOP_NOTICES[result.stopReason];
        if (ending) store.dispatch({ type: 'notice', level: 'info', text: ending });
      } catch (error) {
        if (epoch !== this.epoch || connectionLost(error)) {
          // The sidecar died under the turn: its cards end here; the crash notice says what happened and what to do.
          // (Unless a newer turn runs by now in the restarted sidecar: that one is not this answer's to end.)
          this.lostTurn = epoch === this.epoch;
          if (!this.newerTurn(epoch)) {
            store.dispatch({ type: 'turnAborted', reason: 'the sidecar stopped', at: this.deps.timers.now() });
          }
        } else {
          this.report(error);
        }
      } finally {
        if (!this.newerTurn(epoch)) store.dispatch({ type: 'busy', busy: false });
      }
      await this.redrawIfCompacted();
      void this.sessions.refreshList(); // the first message names the session: the picker shows the name
    } finally {
      if (sentIn === this.epoch) this.sending = false;
    }
  }

  /** `/compact [focus]`: the sidecar summarises the older turns; its compacted / compaction_failed event says how it went. */
  private async compact(focus: string | null): Promise<void> {
    const { store, client } = this.deps;
    const sessionId = store.state.sessionId;
    if (sessionId === null || store.state.busy || this.sending) {
      const text = sessionId === null ? 'There is no conversation to compact yet.' : 'A turn is still running: compact once it has finished.';
      store.dispatch({ type: 'notice', level: 'warning', text });
      return;
    }
    store.dispatch({ type: 'busy', busy: true });
    try {
      await client.compact(sessionId, focus);
    } catch (error) {
      this.report(error);
    } finally {
      store.dispatch({ type: 'busy', busy: false });
    }
    await this.redrawIfCompacted();
  }

  /** The sidecar's history marks what a compaction summarised: the open session is drawn from it again. */
  private async redrawIfCompacted(): Promise<void> {
    if (!this.compacted) return;
    this.compacted = false;
    await this.sessions.reload();
  }

  /** A turn started after the sidecar this one was sent to went away (whose answer this is not). */
  private newerTurn(epoch: number): boolean {
    return epoch !== this.epoch && this.sending;
  }

  /** A new session; a turn still running in the open one is interrupted first. */
  async newSession(): Promise<void> {
    if (this.deps.store.state.busy) await this.interrupt();
    await this.sessions.startNew();
  }

  async interrupt(): Promise<void> {
    const { store, client } = this.deps;
    const sessionId = store.state.sessionId;
    if (!store.state.busy || !sessionId) return;
    try {
      await client.interrupt(sessionId);
    } catch (error) {
      this.report(error);
    }
  }

  /** Tell the running sidecar which model to use, and show what it says about it. */
  async configureProvider(): Promise<void> {
    const { store, client } = this.deps;
    const wanted = this.deps.providerConfiguration();
    try {
      const status = await client.configureProvider(wanted);
      store.dispatch({
        type: 'provider',
        provider: {
          provider: status.provider,
          model: status.model,
          baseUrl: status.baseUrl ?? '',
          hasApiKey: status.hasKey,
          message: status.message,
        },
      });
    } catch (error) {
      store.dispatch({ type: 'provider', provider: this.localProviderStatus() });
      // A sidecar without the chat methods cannot chat at all; sending a message says so.
      if (!(error instanceof SidecarUnavailable) && !(error instanceof NotSupported)) this.report(error);
    }
  }

  /** The provider line while no sidecar can speak for it: from the settings and the stored key. */
  localProviderStatus(): ProviderStatus {
    const wanted = this.deps.providerConfiguration();
    return {
      provider: wanted.provider ?? 'anthropic',
      model: wanted.model ?? '',
      baseUrl: wanted.baseUrl ?? '',
      hasApiKey: this.deps.hasStoredKey(),
      message: '',
    };
  }

  /** The extension's settings changed (LiveSettings.reload): start a new sidecar, or tell the running one. */
  async settingsChanged(change: SettingsChange): Promise<void> {
    if (change.restart) {
      this.deps.log('settings changed: restarting the sidecar');
      this.deps.store.dispatch({ type: 'provider', provider: this.localProviderStatus() });
      await this.deps.restartSidecar();
      return;
    }
    if (change.provider) await this.configureProvider();
    if (change.reviewEdits) await this.sessions.reviewEditsChanged();
  }

  /** The stored API keys were read: until a sidecar speaks for the provider, the status line says what is known. */
  keysRead(state: SidecarState): void {
    if (state.kind !== 'running') this.deps.store.dispatch({ type: 'provider', provider: this.localProviderStatus() });
  }

  private chatEvent(params: ChatEventParams): void {
    const { store, timers } = this.deps;
    if (params.sessionId !== store.state.sessionId) return; // a session that is not on screen
    if (params.event.type === 'compacted') this.compacted = true;
    store.dispatch({ type: 'event', event: params.event, at: timers.now() });
  }

  private toolProgress(params: ToolProgressParams): void {
    const { store } = this.deps;
    if (params.sessionId !== store.state.sessionId) return;
    store.dispatch({ type: 'toolProgress', toolUseId: params.toolUseId, text: params.text });
  }

  private report(error: unknown): void {
    this.deps.store.dispatch(failureNotice(error));
  }
}
