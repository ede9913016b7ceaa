import { describe, expect, it } from 'vitest';

import type { EscapeContext } from '../src/shared/keys';
import { escapeAction } from '../src/shared/keys';

const composerWhileBusy: EscapeContext = {
  focusInOpenPanel: false,
  anyPanelOpen: false,
  focusInComposerOrTranscript: true,
  busy: true,
};

describe('Escape in the chat view', () => {
  it('interrupts a running turn from the composer or transcript when nothing is open', () => {
    expect(escapeAction(composerWhileBusy)).toBe('interrupt');
  });

  it('closes the feedback box or rule editor it is typed in, and does not interrupt', () => {
    expect(escapeAction({ ...composerWhileBusy, focusInOpenPanel: true, anyPanelOpen: true, focusInComposerOrTranscript: true })).toBe(
      'closePanel',
    );
  });

  it('does nothing while a panel with, perhaps, typed feedback is open elsewhere', () => {
    expect(escapeAction({ ...composerWhileBusy, anyPanelOpen: true })).toBe('nothing');
  });

  it('does nothing from the header (a select, a button) or when no turn runs', () => {
    expect(escapeAction({ ...composerWhileBusy, focusInComposerOrTranscript: false })).toBe('nothing');
    expect(escapeAction({ ...composerWhileBusy, busy: false })).toBe('nothing');
  });
});
