/**
 * Where the transcript should be scrolled, decided again after every change of its content or of its own height
 * (the todo list and the banners above and below it take height from it). Pure: the view measures, this decides.
 *
 * - While the person has not scrolled up, the transcript follows the bottom: the newest item stays visible.
 * - A pending approval or review is always brought into view: nothing else can happen until it is answered.
 * - When the person has scrolled up, the view stays where they put it and offers "jump to latest" instead.
 */

export interface ScrollBox {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}

/** A span of the transcript's content, in the same coordinates as scrollTop. */
export interface Span {
  top: number;
  bottom: number;
}

/** How close to the bottom still counts as "at the bottom" (a line's rounding, a border). */
export const BOTTOM_SLACK_PX = 24;

/** Also whether the person's own scroll leaves the transcript following the bottom. */
export function atBottom(box: ScrollBox): boolean {
  return box.scrollHeight - box.scrollTop - box.clientHeight <= BOTTOM_SLACK_PX;
}

export function bottomOf(box: ScrollBox): number {
  return Math.max(0, box.scrollHeight - box.clientHeight);
}

export interface FollowDecision {
  /** Where to scroll to; null to leave the scroll position as it is. */
  scrollTop: number | null;
  /** Whether to offer the "jump to latest" button. */
  showJump: boolean;
}

/**
 * The scroll position after a change. `pending` is the first pending card's span, if any; a card taller than the
 * view is shown from its top (its title and question), otherwise whole.
 */
export function decideScroll(box: ScrollBox, following: boolean, pending: Span | null): FollowDecision {
  if (following) return { scrollTop: bottomOf(box), showJump: false };
  let scrollTop: number | null = null;
  if (pending && !spanVisible(box, pending)) {
    const height = pending.bottom - pending.top;
    scrollTop = height > box.clientHeight ? pending.top : pending.bottom - box.clientHeight;
    scrollTop = Math.min(Math.max(0, scrollTop), bottomOf(box));
  }
  const after = scrollTop === null ? box : { ...box, scrollTop };
  return { scrollTop, showJump: !atBottom(after) };
}

/** Whether the span is wholly inside the visible part (or, when taller than it, fills it from its top). */
export function spanVisible(box: ScrollBox, span: Span): boolean {
  const viewTop = box.scrollTop;
  const viewBottom = box.scrollTop + box.clientHeight;
  if (span.bottom - span.top > box.clientHeight) return span.top >= viewTop - 1 && span.top <= viewBottom;
  return span.top >= viewTop - 1 && span.bottom <= viewBottom + 1;
}
