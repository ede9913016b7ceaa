/**
 * Where the keyboard goes in the chat view: the composer when the view takes the focus, a new pending card when
 * the person is not typing, back to a panel's own button when Escape closes the panel (shared/keys.ts decides what
 * Escape does).
 */

const PENDING_CARDS = '.approval-pending, .review-pending, .mcp-card-pending';

/** The things Escape closes, innermost first: a card's feedback box or rule editor, the bypass question. */
export const OPEN_PANELS = '.card-panel:not([hidden]), .bypass-warning:not([hidden])';

export class KeyboardFocus {
  private focusedPending = new Set<string>();
  private pointerDown = false;

  constructor(
    /** Where the cards are: the transcript's, and the MCP approval cards above it. */
    private readonly root: HTMLElement,
    private readonly composer: HTMLTextAreaElement,
  ) {
    // The view took the focus (Open Chat, the keybinding, a click on its tab): the composer is where typing goes,
    // unless a pointer is choosing another place at this moment.
    window.addEventListener('pointerdown', () => (this.pointerDown = true), true);
    window.addEventListener('pointerup', () => (this.pointerDown = false), true);
    window.addEventListener('focus', () => {
      requestAnimationFrame(() => {
        if (this.pointerDown || (document.activeElement && document.activeElement !== document.body)) return;
        composer.focus();
      });
    });
  }

  /**
   * A card that starts waiting takes the keyboard when the person is not typing: the card itself (not a button, so
   * a stray Enter answers nothing), from where Tab reaches its choices.
   */
  focusNewPendingCard(): void {
    const cards = [...this.root.querySelectorAll<HTMLElement>(PENDING_CARDS)];
    const fresh = cards.find((card) => !this.focusedPending.has(card.dataset.item ?? ''));
    this.focusedPending = new Set(cards.map((card) => card.dataset.item ?? ''));
    if (!fresh || !document.hasFocus()) return;
    const focused = document.activeElement;
    const idle =
      !focused || focused === document.body || (focused === this.composer && this.composer.value.trim() === '');
    if (idle) fresh.focus({ preventScroll: true });
  }

  /** Alt+Shift+P: the first pending card, at any time. */
  focusFirstPendingCard(): boolean {
    const card = this.root.querySelector<HTMLElement>(PENDING_CARDS);
    card?.focus();
    return card !== null;
  }

  /**
   * Close a card's panel: its own button (Deny…, Reject…, Always allow…) gets the focus back; what was typed stays
   * in the panel for the next time it opens.
   */
  closeCardPanel(panel: HTMLElement): void {
    const toggle = panel.closest('.card')?.querySelector<HTMLButtonElement>(`button[aria-controls="${panel.id}"]`);
    panel.hidden = true;
    if (toggle) {
      toggle.setAttribute('aria-expanded', 'false');
      toggle.focus();
    } else {
      this.composer.focus();
    }
  }
}
