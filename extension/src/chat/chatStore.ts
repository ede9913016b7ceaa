/** The host's copy of the chat state: every change goes through `dispatch`, and listeners see each action. */

import { Emitter } from '../host';
import type { ChatAction, ChatState } from '../shared/chatModel';
import { reduce } from '../shared/chatModel';

export class ChatStore {
  private current: ChatState;
  private readonly actions = new Emitter<ChatAction>();

  /** Fires after each action has been applied. */
  readonly onDidDispatch = this.actions.event;

  constructor(initial: ChatState) {
    this.current = initial;
  }

  get state(): ChatState {
    return this.current;
  }

  dispatch(action: ChatAction): void {
    this.current = reduce(this.current, action);
    this.actions.fire(action);
  }
}

/** Who is looking at the chat: used to decide between an inline card and a notification. */
export interface ChatPresence {
  isVisible(): boolean;
  /** Fires when the chat view is shown or hidden. */
  onDidChangeVisibility(listener: (visible: boolean) => void): { dispose(): void };
  /** The number shown on the activity-bar icon (pending approvals and reviews); 0 hides it. */
  setBadge(count: number, tooltip: string): void;
}
