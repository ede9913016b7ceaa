/**
 * The changes bar's host side: it asks the sidecar for the agent's changes of the last turns after every call and
 * every turn, and carries out the bar's buttons (Keep / Undo per hunk, per file, all; Redo; a conflict's keep mine,
 * take the undo, open a merge). The sidecar decides and does everything; this says what happened in the bar itself,
 * where the person clicked, not at the bottom of the transcript.
 */

import type { ChatStore } from '../chat/chatStore';
import type { ChangedFileInfo } from '../protocol';
import type { BarNotice, WithoutRef } from '../shared/changesBar';
import { barFiles, undoNotice } from '../shared/changesBar';
import type { ViewMessage } from '../shared/messages';
import type { SidecarClient } from '../sidecar/sidecarClient';
import { failureReason, NotSupported, SidecarUnavailable } from '../sidecar/sidecarClient';
import type { ChangesHost } from './checkpoints';

export interface ChangesBarDeps {
  store: ChatStore;
  client: Pick<SidecarClient, 'listChanges' | 'keepChange' | 'undoChange' | 'changesWithout' | 'restoreCheckpoint'>;
  changes: Pick<ChangesHost, 'showDiff'>;
  /** The workspace folder the sidecar's relative paths start from. */
  workspaceRoot: () => string | undefined;
  /** Files changed on disk by anyone (absolute paths): a listed file the person edits may now be a conflict. */
  onFileChanged?: (listener: (fsPath: string) => void) => void;
  log: (line: string) => void;
}

type ChangesMessage = Extract<ViewMessage, { type: 'changes' }>;

export function isChangesMessage(message: ViewMessage): message is ChangesMessage {
  return message.type === 'changes';
}

export class ChangesBarController {
  private listed: ChangedFileInfo[] = [];
  /** Bumped for each listing asked for: an answer that a newer request overtook is dropped. */
  private asked = 0;
  /** A listing under way, and whether another was asked for meanwhile: calls that end in a burst cost one more. */
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: ChangesBarDeps) {
    deps.store.onDidDispatch((action) => {
      const callEnded = action.type === 'event' && action.event.type === 'tool_call_finished';
      if (callEnded || (action.type === 'busy' && !action.busy) || action.type === 'sessionOpened') void this.refresh();
    });
    deps.onFileChanged?.((fsPath) => {
      // Between turns only: during one, every call that ends lists again anyway, and so does the turn's end. Listing
      // again now shows a person's edit on the agent's lines as a conflict before they click Undo, instead of after.
      if (!deps.store.state.busy && this.lists(fsPath)) void this.refresh();
    });
  }

  /** Whether the bar lists this file (the sidecar names workspace files relative to the folder). */
  private lists(fsPath: string): boolean {
    const root = this.deps.workspaceRoot()?.replace(/\/+$/, '');
    const relative = root && fsPath.startsWith(`${root}/`) ? fsPath.slice(root.length + 1) : fsPath;
    return this.listed.some((file) => file.path === relative || file.path === fsPath);
  }

  /** List the changes again; while a listing runs, one more follows it (not one per call that ended). */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<void> => {
      do {
        this.again = false;
        await this.listOnce();
      } while (this.again);
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async listOnce(): Promise<void> {
    const { store, client } = this.deps;
    const sessionId = store.state.sessionId;
    if (!sessionId) return;
    const asked = ++this.asked;
    try {
      const result = await client.listChanges(sessionId);
      if (asked !== this.asked || store.state.sessionId !== sessionId) return;
      this.show(result.enabled ? result.files : []);
    } catch (error) {
      // An older sidecar, or none: no bar.
      if (!(error instanceof NotSupported) && !(error instanceof SidecarUnavailable)) {
        this.deps.log(`the changes bar could not be listed: ${failureReason(error)}`);
      }
    }
  }

  /** The left side of a file's diff from the bar. */
  async withoutText(ref: WithoutRef | undefined): Promise<string> {
    if (!ref) return '';
    try {
      const file = await this.deps.client.changesWithout(ref.sessionId, ref.path);
      return file.binary ? `(${ref.path} is a binary file: its content is not shown here.)` : file.content;
    } catch (error) {
      return `(${ref.path} without the agent's changes could not be read: ${failureReason(error)})`;
    }
  }

  async viewMessage(message: ChangesMessage): Promise<void> {
    const sessionId = this.deps.store.state.sessionId;
    if (!sessionId) return;
    try {
      await this.carryOut(sessionId, message);
    } catch (error) {
      this.notice({ level: 'error', text: `That did not work: ${failureReason(error)}` });
    }
  }

  private async carryOut(sessionId: string, message: ChangesMessage): Promise<void> {
    const { client } = this.deps;
    switch (message.op) {
      case 'dismiss':
        return this.notice(null);
      case 'undoAll':
        this.notice(undoNotice(await client.undoChange(sessionId, {}), 'the agent’s changes'));
        return this.refresh();
      case 'keepAll': {
        for (const file of this.listed) await client.keepChange(sessionId, file.path);
        this.notice({ level: 'info', text: `Kept the agent’s changes in ${count(this.listed.length)}.` });
        return this.refresh();
      }
      case 'redo': {
        const redo = this.deps.store.state.changes.notice?.redo;
        if (!redo) return;
        const result = await client.restoreCheckpoint(sessionId, redo, 'code');
        this.notice(
          result.restored
            ? { level: 'info', text: `Undo taken back: ${count(result.files.length)} as before it.` }
            : { level: 'error', text: `The undo could not be taken back: ${result.reason ?? 'no reason given'}` },
        );
        return this.refresh();
      }
      default:
        return this.onFile(sessionId, message);
    }
  }

  private async onFile(sessionId: string, message: ChangesMessage): Promise<void> {
    const file = this.listed.find((candidate) => candidate.path === message.path);
    if (!file || (message.version !== undefined && message.version !== file.version)) {
      this.notice({ level: 'warning', text: `${message.path ?? 'That file'} changed since the bar was drawn: look at it again, then choose.` });
      return this.refresh();
    }
    const hunk = message.hunk === undefined ? undefined : file.hunks[message.hunk];
    if (message.hunk !== undefined && !hunk) return this.refresh();
    const { client } = this.deps;
    switch (message.op) {
      case 'open':
      case 'merge':
        return this.openDiff(sessionId, file, message.op === 'merge');
      case 'keep': {
        const result = await client.keepChange(sessionId, file.path, hunk);
        this.show(result.enabled ? result.files : []);
        return this.notice({ level: 'info', text: `Kept ${hunk ? 'a change' : 'the agent’s changes'} in ${file.path}.` });
      }
      case 'undo':
        this.notice(undoNotice(await client.undoChange(sessionId, { path: file.path, ...(hunk ? { hunk } : {}) }), hunk ? 'a change' : 'the agent’s changes'));
        return this.refresh();
      case 'takeUndo':
        this.notice(undoNotice(await client.undoChange(sessionId, { path: file.path, takeUndo: true }), 'the agent’s changes (yours kept where they did not meet)'));
        return this.refresh();
    }
  }

  private async openDiff(sessionId: string, file: ChangedFileInfo, merge: boolean): Promise<void> {
    const root = this.deps.workspaceRoot();
    const onDisk = root && !file.path.startsWith('/') ? `${root.replace(/\/+$/, '')}/${file.path}` : file.path;
    const without = file.status === 'created' && !merge ? null : { without: { sessionId, path: file.path }, shownAs: onDisk };
    const title = merge ? `Merge ${file.path}: the undo ↔ your file` : `Agent’s changes: ${file.path}`;
    await this.deps.changes.showDiff(title, { path: file.path, onDisk, original: without, modified: file.status === 'removed' ? null : { file: onDisk } });
  }

  private show(files: ChangedFileInfo[]): void {
    this.listed = files;
    this.deps.store.dispatch({ type: 'changesListed', files: barFiles(files) });
  }

  private notice(notice: BarNotice | null): void {
    this.deps.store.dispatch({ type: 'changesNotice', notice });
  }
}

function count(files: number): string {
  return `${files} ${files === 1 ? 'file' : 'files'}`;
}
