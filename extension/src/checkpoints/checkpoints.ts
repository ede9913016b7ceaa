/**
 * Restore…, Redo and "N files changed" in the chat: the questions, previews and notices around the sidecar's
 * checkpoint methods. The sidecar decides everything (what a restore does, whether it may); this module asks it,
 * shows the answer in the editor's changes view, and says what happened in the chat.
 */

import type { ChatStore } from '../chat/chatStore';
import type { Notifier } from '../host';
import type { FileChange } from '../protocol';
import type { Item } from '../shared/chatModel';
import type { WithoutRef } from '../shared/changesBar';
import type { CheckpointFileRef, RestoreWhat } from '../shared/checkpointView';
import { RESTORE_CHOICES, restoreNotice, restoreQuestion, restoreRefusal } from '../shared/checkpointView';
import type { ViewMessage } from '../shared/messages';
import type { SidecarClient } from '../sidecar/sidecarClient';
import { failureReason, NotSupported, SidecarUnavailable } from '../sidecar/sidecarClient';

/**
 * One side of a file's diff: the file on disk now, a file at a checkpoint, the file without the agent's changes
 * (the changes bar), or nothing (it does not exist there).
 */
export type DiffSide =
  | { file: string }
  | { checkpoint: CheckpointFileRef; shownAs: string }
  | { without: WithoutRef; shownAs: string }
  | null;

export interface ChangedFile {
  /** Relative to the workspace. */
  path: string;
  /** Where it is on disk (the name the editor shows for both sides). */
  onDisk: string;
  original: DiffSide;
  modified: DiffSide;
}

/** The editor's part (vscodeApi.ts). */
export interface ChangesHost {
  /** Open the multi-file changes editor; false when this editor has none (then each file opens on its own). */
  showChanges(title: string, files: readonly ChangedFile[]): Promise<boolean>;
  showDiff(title: string, file: ChangedFile): Promise<void>;
  /** Close the editors a preview of this title opened (the changes view, or the diffs opened one by one). */
  closeChanges(title: string): Promise<void>;
  fileExists(path: string): Promise<boolean>;
}

export interface CheckpointDeps {
  store: ChatStore;
  client: Pick<SidecarClient, 'listCheckpoints' | 'checkpointDiff' | 'checkpointFile' | 'restoreCheckpoint'>;
  notifier: Pick<Notifier, 'pick' | 'confirm'>;
  changes: ChangesHost;
  /** The workspace folder the sidecar's relative paths start from. */
  workspaceRoot: () => string | undefined;
  /** Draw the open session again from the sidecar's history (its conversation was cut back). */
  reloadSession: () => Promise<void>;
  log: (line: string) => void;
}

type CheckpointMessage = Extract<ViewMessage, { type: 'restoreCheckpoint' | 'showTurnChanges' | 'redoRestore' }>;

export function isCheckpointMessage(message: ViewMessage): message is CheckpointMessage {
  return message.type === 'restoreCheckpoint' || message.type === 'showTurnChanges' || message.type === 'redoRestore';
}

type Prompt = Extract<Item, { kind: 'user' }> & { turn: NonNullable<Extract<Item, { kind: 'user' }>['turn']> };

export class CheckpointController {
  /** Bumped for each listing asked for: an answer that a newer request overtook is dropped. */
  private listing = 0;

  constructor(private readonly deps: CheckpointDeps) {
    // A finished turn (or a session drawn from its history) has new checkpoints: the prompts' marks follow.
    deps.store.onDidDispatch((action) => {
      if ((action.type === 'busy' && !action.busy) || action.type === 'sessionOpened') void this.refresh();
    });
  }

  async viewMessage(message: CheckpointMessage): Promise<void> {
    switch (message.type) {
      case 'restoreCheckpoint':
        return this.restore(message.itemId);
      case 'showTurnChanges':
        return this.showTurn(message.itemId);
      case 'redoRestore':
        return this.redo(message.itemId);
    }
  }

  /** Ask the sidecar for the open session's turns, and mark each prompt with its own. */
  async refresh(): Promise<void> {
    const { store, client } = this.deps;
    const sessionId = store.state.sessionId;
    if (!sessionId || store.state.busy) return;
    const asked = ++this.listing;
    try {
      const result = await client.listCheckpoints(sessionId);
      if (asked !== this.listing || store.state.sessionId !== sessionId) return;
      if (!result.enabled) this.deps.log(`checkpoints are off for this session: ${result.reason ?? 'no reason given'}`);
      store.dispatch({ type: 'checkpoints', turns: result.turns });
    } catch (error) {
      // An older sidecar, or none: the prompts simply offer no Restore….
      if (!(error instanceof NotSupported) && !(error instanceof SidecarUnavailable)) {
        this.deps.log(`checkpoints could not be listed: ${failureReason(error)}`);
      }
    }
  }

  /** A file's text at a checkpoint, for the checkpoint side of the diff views. */
  async fileText(ref: CheckpointFileRef | undefined): Promise<string> {
    if (!ref) return '';
    try {
      const file = await this.deps.client.checkpointFile(ref.sessionId, ref.checkpointId, ref.path);
      if (file.binary) return `(${ref.path} is a binary file: its content is not shown here.)`;
      return file.content;
    } catch (error) {
      return `(${ref.path} could not be read at that checkpoint: ${failureReason(error)})`;
    }
  }

  async restore(itemId: string): Promise<void> {
    const prompt = this.prompt(itemId);
    const sessionId = this.deps.store.state.sessionId;
    if (!prompt || !sessionId) return this.say('error', 'This message has no checkpoint to go back to (it may have been cut from the conversation).');
    if (this.deps.store.state.busy) return this.say('warning', 'A turn is running: wait for it to end (or press Escape to interrupt it), then use Restore… again.');
    const choice = await this.deps.notifier.pick(
      RESTORE_CHOICES.map((entry) => ({ label: entry.label, detail: entry.detail, what: entry.what })),
      { title: 'Restore to before this message', placeholder: excerpt(prompt.text) },
    );
    if (!choice) return;
    const what = choice.what;
    const previewTitle = `Restore: now ↔ before "${excerpt(prompt.text)}"`;
    let files: FileChange[] = [];
    if (what !== 'conversation') {
      let unsaved: string[];
      try {
        ({ files, unsaved } = await this.deps.client.checkpointDiff(sessionId, prompt.turn.start));
      } catch (error) {
        return this.say('error', restoreRefusal(failureReason(error)));
      }
      // The restore would refuse them anyway: say so before a preview and a question that could only end there.
      if (unsaved.length > 0) return this.say('warning', unsavedNotice(unsaved));
      if (files.length === 0 && what === 'code') {
        return this.say('info', 'The files are already as they were before that message: there is nothing to restore.');
      }
      if (files.length > 0) await this.preview(previewTitle, await this.restoreSides(sessionId, prompt.turn.start, files));
    }
    const question = restoreQuestion(what, files);
    if (!(await this.deps.notifier.confirm(question.message, question.detail, 'Restore'))) return;
    // Once restored, the preview compares the checkpoint with itself: a stale view left open would only mislead.
    if (await this.apply(sessionId, prompt.turn.start, what, what)) await this.deps.changes.closeChanges(previewTitle);
  }

  async redo(itemId: string): Promise<void> {
    const sessionId = this.deps.store.state.sessionId;
    const notice = this.deps.store.state.items.find((item) => item.id === itemId && item.kind === 'notice');
    const redo = notice?.kind === 'notice' ? notice.redo : undefined;
    if (!redo || !sessionId) return;
    if (this.deps.store.state.busy) return this.say('warning', 'A turn is running: wait for it to end (or press Escape to interrupt it), then use Redo again.');
    await this.apply(sessionId, redo.checkpoint, redo.what, 'redo');
  }

  /** The turn's own changes: from its first checkpoint to its last. */
  async showTurn(itemId: string): Promise<void> {
    const prompt = this.prompt(itemId);
    const sessionId = this.deps.store.state.sessionId;
    if (!prompt || !sessionId) return;
    const { start, end } = prompt.turn;
    try {
      const { files } = await this.deps.client.checkpointDiff(sessionId, start, end);
      if (files.length === 0) return this.say('info', 'That turn left no file changed.');
      const sides = files.map((file) => {
        const onDisk = this.onDisk(file.path);
        const at = (checkpointId: string): DiffSide => ({ checkpoint: { sessionId, checkpointId, path: file.path }, shownAs: onDisk });
        return { path: file.path, onDisk, original: at(start), modified: file.action === 'remove' ? null : at(end) };
      });
      await this.preview(`Changes of "${excerpt(prompt.text)}"`, sides);
    } catch (error) {
      this.say('error', `The turn's changes could not be shown: ${failureReason(error)}`);
    }
  }

  /** Restore (or redo); whether the sidecar did it. */
  private async apply(sessionId: string, checkpointId: string, what: RestoreWhat, said: RestoreWhat | 'redo'): Promise<boolean> {
    try {
      const result = await this.deps.client.restoreCheckpoint(sessionId, checkpointId, what);
      if (!result.restored) {
        this.say('error', restoreRefusal(result.reason));
        return false;
      }
      if (result.conversationRestored) await this.deps.reloadSession();
      const redo = said !== 'redo' && result.redo ? { checkpoint: result.redo, what } : undefined;
      this.deps.store.dispatch({ type: 'notice', level: 'info', text: restoreNotice(said, result), ...(redo ? { redo } : {}) });
      await this.refresh();
      return true;
    } catch (error) {
      this.say('error', restoreRefusal(failureReason(error)));
      return false;
    }
  }

  /** Now on the left, the checkpoint on the right: what Restore would make of each file. */
  private async restoreSides(sessionId: string, checkpointId: string, files: readonly FileChange[]): Promise<ChangedFile[]> {
    const root = this.deps.workspaceRoot();
    return Promise.all(
      files.map(async (file) => {
        const onDisk = this.onDisk(file.path);
        const exists = root !== undefined && (await this.deps.changes.fileExists(onDisk));
        const checkpoint = { checkpoint: { sessionId, checkpointId, path: file.path }, shownAs: onDisk };
        return { path: file.path, onDisk, original: exists ? { file: onDisk } : null, modified: file.action === 'remove' ? null : checkpoint };
      }),
    );
  }

  private onDisk(path: string): string {
    const root = this.deps.workspaceRoot();
    return root ? `${root.replace(/\/+$/, '')}/${path}` : path;
  }

  private async preview(title: string, files: readonly ChangedFile[]): Promise<void> {
    if (await this.deps.changes.showChanges(title, files)) return;
    // No changes editor here: the files one by one, from a list.
    const picked = await this.deps.notifier.pick(
      files.map((file) => ({ label: file.path, file })),
      { title, placeholder: 'Open a file’s diff' },
    );
    if (picked) await this.deps.changes.showDiff(`${title}: ${picked.file.path}`, picked.file);
  }

  private prompt(itemId: string): Prompt | undefined {
    const item = this.deps.store.state.items.find((candidate) => candidate.id === itemId && candidate.kind === 'user');
    return item?.kind === 'user' && item.turn ? (item as Prompt) : undefined;
  }

  private say(level: 'info' | 'warning' | 'error', text: string): void {
    this.deps.store.dispatch({ type: 'notice', level, text });
  }
}

function unsavedNotice(unsaved: readonly string[]): string {
  const named = unsaved.slice(0, 5).join(', ') + (unsaved.length > 5 ? ` and ${unsaved.length - 5} more` : '');
  const these = unsaved.length === 1 ? 'has' : 'have';
  return (
    `Nothing was restored: ${named} ${these} unsaved changes in the editor, and restoring would overwrite them. ` +
    'Save or revert them, then use Restore… again.'
  );
}

/** A prompt as a title names it: its first line, shortened. */
function excerpt(text: string): string {
  const line = text.trim().split(/\r?\n/, 1)[0] ?? '';
  return line.length > 40 ? `${line.slice(0, 39)}…` : line;
}
