/**
 * What the chat says about the sidecar and about how a turn ended: the status line at the top, the notice after a
 * crash, the transcript's line for a turn that stopped early, and a failed request's notice. Pure: the controller
 * and the sessions decide when to show them.
 */

import type { StopReason } from '../protocol';
import { errorMessage } from '../sidecar/rpc';
import { NotSupported, SidecarUnavailable } from '../sidecar/sidecarClient';
import type { ChatAction, SidecarStatus } from '../shared/chatModel';
import type { SidecarState } from '../sidecar/sidecar';

/** What the transcript says when a turn ends other than by the model finishing (errors have their own event). */
export const STOP_NOTICES: Partial<Record<StopReason, string>> = {
  interrupted: 'Interrupted. Calls that were still running were stopped.',
  max_tokens: 'The reply was cut off at the model\'s output limit.',
  max_turns: 'The turn stopped after the most model requests one message may take.',
};

/** A request that failed, as a notice: a warning when the sidecar cannot do it (too old, or not running), else an error. */
export function failureNotice(error: unknown): Extract<ChatAction, { type: 'notice' }> {
  const level = error instanceof NotSupported || error instanceof SidecarUnavailable ? 'warning' : 'error';
  return { type: 'notice', level, text: errorMessage(error) };
}

/** How the sidecar's state reads at the top of the chat. */
export function sidecarStatus(state: SidecarState): SidecarStatus {
  switch (state.kind) {
    case 'stopped':
      return { state: 'stopped' };
    case 'starting':
      return {
        state: 'starting',
        detail:
          state.step ?? (state.attempt > 0 ? `Restarting the sidecar (attempt ${state.attempt})…` : 'Starting the sidecar…'),
      };
    case 'running': {
      const version = state.server.version ? ` ${state.server.version}` : '';
      return { state: 'ready', detail: `${state.server.name}${version} · Python ${state.python.version}` };
    }
    case 'restarting':
      return {
        state: 'restarting',
        detail: `The sidecar stopped (${state.reason}). Restarting in ${(state.delayMs / 1000).toFixed(1)} s…`,
        attempt: state.attempt,
        maxAttempts: state.maxAttempts,
      };
    case 'failed':
      return {
        state: 'unavailable',
        detail: `The toolgate sidecar is unavailable: ${state.reason}.`,
        fix: state.detail
          ? `Its last output: ${lastLines(state.detail, 3)}`
          : 'The sidecar log has the details. Fix the cause, then restart the sidecar.',
        actions: ['restartSidecar', 'showLog'],
      };
    case 'unavailable':
      return {
        state: 'unavailable',
        detail: `The toolgate sidecar is unavailable: ${state.python.message}`,
        fix: state.python.fix,
        actions: [...state.python.actions, 'restartSidecar'],
      };
  }
}

/** A request that failed because the connection to the sidecar went away under it (the process died). */
export function connectionLost(error: unknown): boolean {
  return /connection got disposed|connection (is |was )?(closed|disposed)|stream (was )?destroyed/i.test(errorMessage(error));
}

/** What a crash means for the person, in their words: what ended, and what to do now. */
export function crashNotice(state: Extract<SidecarState, { kind: 'restarting' | 'failed' }>, turnEnded: boolean): string {
  const turn = turnEnded
    ? ' The turn that was running has ended: running tools were stopped and questions still waiting for you were withdrawn.'
    : '';
  if (state.kind === 'restarting') {
    return (
      `The toolgate sidecar stopped unexpectedly (${state.reason}).${turn} It is being restarted (attempt ` +
      `${state.attempt} of ${state.maxAttempts}); once the top of the chat says ready, send your message again.`
    );
  }
  return (
    `The toolgate sidecar stopped unexpectedly and was not restarted: ${state.reason}.${turn} ` +
    'Show log has the details; fix the cause, then use Restart sidecar at the top of the chat.'
  );
}

function lastLines(text: string, count: number): string {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .slice(-count)
    .join(' ⏎ ');
}
