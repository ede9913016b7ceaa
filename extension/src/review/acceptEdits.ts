/**
 * "Allow, and accept edits" (an approval card) and "Accept, and accept edits" (a diff review): the session switches
 * to acceptEdits mode to answer the waiting call, before the yes itself. The sidecar records the switch with the
 * call's answer (so a reopened session says so), and the chat's header shows the new mode.
 */

import type { SidecarClient } from '../sidecar/sidecarClient';

/** Switch `sessionId` to acceptEdits mode to answer the call `toolUseId`; rejects with the sidecar's reason. */
export type AcceptEditsSwitch = (sessionId: string, toolUseId: string) => Promise<void>;

export function acceptEditsSwitch(
  client: Pick<SidecarClient, 'setMode'>,
  modeChanged: (mode: 'acceptEdits') => void,
): AcceptEditsSwitch {
  return async (sessionId, toolUseId) => {
    await client.setMode(sessionId, 'acceptEdits', toolUseId);
    modeChanged('acceptEdits');
  };
}
