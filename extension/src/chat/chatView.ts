/**
 * The chat webview view in the toolgate activity-bar container. It only relays: state changes go to the webview as
 * actions (a full snapshot first, whenever a webview is created), and the webview's messages are checked and handed
 * to the controller.
 */

import type * as vscode from 'vscode';

import type { ChatPresence, ChatStore } from './chatStore';
import { Emitter } from '../host';
import type { Disposable } from '../host';
import type { FocusMessage, HostMessage, ViewMessage } from '../shared/messages';
import { parseViewMessage } from '../shared/messages';
import { chatHtml, makeNonce } from './webviewHtml';

export const CHAT_VIEW_ID = 'toolgate.chat';

/** Where the webview's bundle is: the folder it may load from, and its script and stylesheet in it. */
export interface WebviewFiles {
  root: vscode.Uri;
  script: vscode.Uri;
  style: vscode.Uri;
}

export class ChatViewProvider implements vscode.WebviewViewProvider, ChatPresence, Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** Focus was asked for before the webview could take it (Open Chat in a fresh window): given once it is ready. */
  private focusWhenReady: FocusMessage['type'] | null = null;
  private badge: { count: number; tooltip: string } = { count: 0, tooltip: '' };
  private readonly visibility = new Emitter<boolean>();
  private readonly subscriptions: Disposable[] = [];

  constructor(
    private readonly files: WebviewFiles,
    private readonly store: ChatStore,
    private readonly onMessage: (message: ViewMessage) => Promise<void>,
    private readonly log: (line: string) => void,
  ) {
    this.subscriptions.push(store.onDidDispatch((action) => this.post({ type: 'action', action })));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const { root, script, style } = this.files;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [root] };
    const nonce = makeNonce();
    view.webview.html = chatHtml({
      cspSource: view.webview.cspSource,
      nonce,
      scriptUri: view.webview.asWebviewUri(script).toString(),
      styleUri: view.webview.asWebviewUri(style).toString(),
    });
    this.applyBadge();
    const disposables = [
      view.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      view.onDidChangeVisibility(() => this.visibility.fire(view.visible)),
    ];
    view.onDidDispose(() => {
      for (const disposable of disposables) disposable.dispose();
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
        this.visibility.fire(false);
      }
    });
    this.visibility.fire(view.visible);
  }

  isVisible(): boolean {
    return this.view?.visible ?? false;
  }

  readonly onDidChangeVisibility = (listener: (visible: boolean) => void): Disposable =>
    this.visibility.event(listener);

  setBadge(count: number, tooltip: string): void {
    this.badge = { count, tooltip };
    this.applyBadge();
  }

  focusComposer(): void {
    this.focus('focusComposer');
  }

  /** The first card waiting for the person takes the keyboard (the composer, when none waits). */
  focusPendingCard(): void {
    this.focus('focusPendingCard');
  }

  private focus(type: FocusMessage['type']): void {
    if (this.view && this.ready) this.post({ type });
    else this.focusWhenReady = type;
  }

  /** The changes bar's first button (the composer when the bar is empty); nothing while the view is not ready. */
  focusChangesBar(): void {
    this.post({ type: 'focusChangesBar' });
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.visibility.dispose();
  }

  private applyBadge(): void {
    if (!this.view) return;
    // A badge of 0 is hidden; assigning undefined does not reliably remove one that is shown.
    this.view.badge = { value: this.badge.count, tooltip: this.badge.count > 0 ? this.badge.tooltip : '' };
  }

  private receive(raw: unknown): void {
    const message = parseViewMessage(raw);
    if (!message) {
      this.log(`chat view: ignored a message the extension does not understand: ${JSON.stringify(raw).slice(0, 200)}`);
      return;
    }
    if (message.type === 'ready') {
      this.ready = true;
      this.post({ type: 'action', action: { type: 'snapshot', state: this.store.state } });
      if (this.focusWhenReady) {
        this.post({ type: this.focusWhenReady });
        this.focusWhenReady = null;
      }
    }
    this.onMessage(message).catch((error: unknown) => this.log(`chat view: ${String(error)}`));
  }

  /** A message for the webview's own modules (the composer's candidates and chips); dropped while it is not ready. */
  tell(message: HostMessage): void {
    this.post(message);
  }

  private post(message: HostMessage): void {
    if (!this.view || !this.ready) return; // a webview that is not ready gets the whole state when it is
    void this.view.webview.postMessage(message);
  }
}
