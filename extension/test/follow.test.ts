import { describe, expect, it } from 'vitest';

import { atBottom, decideScroll, spanVisible } from '../src/shared/follow';

// A transcript 300 px high showing 0–300 of 1000 px of content, or scrolled to the bottom (700–1000).
const top = { scrollTop: 0, scrollHeight: 1000, clientHeight: 300 };
const bottom = { ...top, scrollTop: 700 };

describe('following the bottom of the transcript', () => {
  it('counts a few pixels short of the bottom as the bottom', () => {
    expect(atBottom(bottom)).toBe(true);
    expect(atBottom({ ...bottom, scrollTop: 690 })).toBe(true);
    expect(atBottom({ ...bottom, scrollTop: 600 })).toBe(false);
  });

  it('goes to the new bottom after the content grows, while following', () => {
    // The reply grew by 200 px since the last draw: the view was at the old bottom.
    expect(decideScroll({ ...bottom, scrollHeight: 1200 }, true, null)).toEqual({ scrollTop: 900, showJump: false });
  });

  it('goes to the new bottom after the transcript itself shrinks (the todo list grew below it)', () => {
    // 120 px of todos took height from the transcript: the old scrollTop no longer shows the bottom.
    const shrunk = { ...bottom, clientHeight: 180 };
    expect(atBottom(shrunk)).toBe(false);
    expect(decideScroll(shrunk, true, null)).toEqual({ scrollTop: 820, showJump: false });
  });

  it('leaves a person who scrolled up where they are, and offers the jump to latest', () => {
    expect(decideScroll({ ...top, scrollHeight: 1200 }, false, null)).toEqual({ scrollTop: null, showJump: true });
  });

  it('brings a pending card below the view into view even when not following', () => {
    const decision = decideScroll(top, false, { top: 800, bottom: 950 });
    expect(decision.scrollTop).toBe(650);
    expect(spanVisible({ ...top, scrollTop: 650 }, { top: 800, bottom: 950 })).toBe(true);
    expect(decision.showJump).toBe(true); // 50 px of newer content below the card
  });

  it('shows a pending card taller than the view from its top, and one already visible stays put', () => {
    expect(decideScroll(top, false, { top: 500, bottom: 900 }).scrollTop).toBe(500);
    expect(decideScroll(top, false, { top: 100, bottom: 250 })).toEqual({ scrollTop: null, showJump: true });
  });

  it('follows the bottom over a pending card when following (the card is the newest item)', () => {
    expect(decideScroll({ ...bottom, scrollHeight: 1150 }, true, { top: 1000, bottom: 1150 }).scrollTop).toBe(850);
  });
});
