/**
 * What a person is told when the sidecar's state changes: a Python problem (once per distinct problem) and a
 * failed sidecar as notifications with their fixes, and a sidecar package of another version than the extension as
 * a notice in the chat.
 */

import type { ChatStore } from '../chat/chatStore';
import type { Notifier } from '../host';
import type { PythonFailure } from '../python/python';
import { installCommand } from '../python/python';
import type { SidecarState } from './sidecar';

export interface SidecarNoticesDeps {
  notifier: Pick<Notifier, 'show'>;
  store: Pick<ChatStore, 'dispatch'>;
  /** This extension's version, which the sidecar package should match. */
  extensionVersion: string;
  /** Where the bundled sidecar package is (the extension's `python/` folder), for the install command. */
  packageDir: string;
  /** Offer the fix for a Python problem (Commands.notifyPythonProblem). */
  notifyPythonProblem(problem: PythonFailure): Promise<void>;
  showLog(): void;
  restart(): Promise<void>;
}

export class SidecarNotices {
  private lastProblem = '';

  constructor(private readonly deps: SidecarNoticesDeps) {}

  changed(state: SidecarState): void {
    const { notifier, store, extensionVersion, packageDir } = this.deps;
    if (state.kind === 'unavailable' && state.python.message !== this.lastProblem) {
      this.lastProblem = state.python.message;
      void this.deps.notifyPythonProblem(state.python);
    } else if (state.kind === 'failed') {
      void notifier
        .show('error', `The toolgate sidecar is unavailable: ${state.reason}.`, 'Show Log', 'Restart Sidecar')
        .then((picked) => {
          if (picked === 'Show Log') this.deps.showLog();
          if (picked === 'Restart Sidecar') void this.deps.restart();
        });
    } else if (state.kind === 'running') {
      this.lastProblem = '';
      if (state.python.notice) store.dispatch({ type: 'notice', level: 'warning', text: state.python.notice });
      // (In toolgate's own environment the version stamp already rebuilt it for this extension version.)
      if (!state.python.environment && state.python.toolgateVersion !== extensionVersion) {
        store.dispatch({
          type: 'notice',
          level: 'warning',
          text:
            `The toolgate package in this Python is version ${state.python.toolgateVersion}; this extension is ` +
            `${extensionVersion}. Install the matching package: ${installCommand(state.python.candidate.command, packageDir)}`,
        });
      }
    }
  }
}
