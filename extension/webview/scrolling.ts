/**
 * The transcript's scroll position, decided again after every change of its content or of its own height (see
 * shared/follow.ts for the decision), and the "jump to latest" button that shows when the person scrolled up.
 */

import { atBottom, decideScroll } from '../src/shared/follow';

export class TranscriptFollower {
  /** Whether the transcript follows its bottom: true until the person scrolls up, again once they are back down. */
  private following = true;
  private scrolledByUs = -1;
  /** The pending card last brought into view, and at which transcript height: a person who then scrolls away from
   * it is not pulled back, until another card waits or the layout changes. */
  private pendingShown = { id: '', height: 0 };

  constructor(
    private readonly transcript: HTMLElement,
    private readonly jumpButton: HTMLButtonElement,
    onJump: () => void,
  ) {
    transcript.addEventListener('scroll', () => {
      // Our own scrolling says nothing about where the person wants to be.
      if (transcript.scrollTop === this.scrolledByUs) return;
      this.scrolledByUs = -1;
      this.following = atBottom(transcript);
      jumpButton.hidden = this.following;
    });
    // The transcript's height changes when the todo list, a banner or the composer grows or shrinks; its content's
    // height when a card opens or output arrives. Either way the decision is made again.
    new ResizeObserver(() => this.follow()).observe(transcript);
    new MutationObserver(() => this.follow()).observe(transcript, { childList: true, subtree: true, characterData: true });
    jumpButton.addEventListener('click', () => {
      this.followAgain();
      onJump();
    });
  }

  /** Follow the bottom again (the person sent a message, or asked for the latest). */
  followAgain(): void {
    this.following = true;
    this.follow();
  }

  follow(): void {
    const { transcript } = this;
    const pendingCard = transcript.querySelector<HTMLElement>('.approval-pending, .review-pending');
    const id = pendingCard?.dataset.item ?? '';
    let pending = null;
    if (pendingCard && (id !== this.pendingShown.id || transcript.clientHeight !== this.pendingShown.height)) {
      const top = pendingCard.offsetTop - transcript.offsetTop;
      pending = { top, bottom: top + pendingCard.offsetHeight };
      this.pendingShown = { id, height: transcript.clientHeight };
    }
    const decision = decideScroll(transcript, this.following, pending);
    if (decision.scrollTop !== null && Math.abs(decision.scrollTop - transcript.scrollTop) >= 1) {
      transcript.scrollTop = decision.scrollTop;
      this.scrolledByUs = transcript.scrollTop;
    }
    this.jumpButton.hidden = !decision.showJump;
  }
}
