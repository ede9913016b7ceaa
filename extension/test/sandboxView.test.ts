import { describe, expect, it } from 'vitest';

import { sandboxLabel } from '../src/shared/sandboxView';

describe('the chat header sandbox label', () => {
  it('says on, off or unavailable in a few words and keeps the why for the tooltip', () => {
    const on = sandboxLabel({ state: 'on', autoAllow: true, detail: 'on (bubblewrap, /usr/bin/bwrap)', network: [] });
    expect(on).toEqual({
      state: 'on',
      text: 'sandboxed, auto-allow',
      title: 'Bash commands run sandboxed: on (bubblewrap, /usr/bin/bwrap)',
    });
    expect(sandboxLabel({ state: 'on', autoAllow: false, detail: 'x', network: [] }).text).toBe('sandboxed');
    expect(sandboxLabel({ state: 'off', autoAllow: false, detail: 'turned off', network: [] }).text).toBe('not sandboxed');
    const missing = sandboxLabel({ state: 'unavailable', autoAllow: false, detail: 'bwrap was not found on PATH', network: [] });
    expect(missing.text).toBe('sandbox unavailable');
    expect(missing.title).toContain('nothing is allowed on its account: bwrap was not found on PATH');
  });
});
