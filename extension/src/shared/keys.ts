/**
 * What Escape does in the chat view. It closes the innermost open thing (a feedback box, a rule editor, the bypass
 * question) and keeps what was typed elsewhere; it interrupts the running turn only from the composer or the
 * transcript while nothing is open. The Stop button stays the explicit way. Pure: the view says where focus is.
 */

export interface EscapeContext {
  /** Focus is inside an open panel (or dialog) that Escape can close. */
  focusInOpenPanel: boolean;
  /** Some panel is open somewhere in the view (with, perhaps, typed feedback in it). */
  anyPanelOpen: boolean;
  /** Focus is in the composer, in the transcript, or on nothing in particular (the page itself). */
  focusInComposerOrTranscript: boolean;
  busy: boolean;
}

export type EscapeAction = 'closePanel' | 'interrupt' | 'nothing';

export function escapeAction(context: EscapeContext): EscapeAction {
  if (context.focusInOpenPanel) return 'closePanel';
  if (context.anyPanelOpen || !context.busy) return 'nothing';
  return context.focusInComposerOrTranscript ? 'interrupt' : 'nothing';
}
