import type * as vscode from 'vscode';
import { describe, expect, it } from 'vitest';

import { ChatViewProvider } from '../src/chat/chatView';
import { newStore } from './fakes';

/** Just enough of a webview view: what the provider sets, and the messages it posts. */
function fakeView() {
  const posted: unknown[] = [];
  let receive: (raw: unknown) => void = () => undefined;
  const view = {
    visible: true,
    badge: undefined as unknown,
    webview: {
      options: {},
      html: '',
      cspSource: 'vscode-resource:',
      asWebviewUri: (uri: unknown) => uri,
      onDidReceiveMessage: (listener: (raw: unknown) => void) => {
        receive = listener;
        return { dispose: () => undefined };
      },
      postMessage: async (message: unknown) => {
        posted.push(message);
        return true;
      },
    },
    onDidChangeVisibility: () => ({ dispose: () => undefined }),
    onDidDispose: () => ({ dispose: () => undefined }),
  };
  return { view: view as unknown as vscode.WebviewView, posted, say: (raw: unknown) => receive(raw) };
}

/** A URI as far as the provider uses one: handed to the webview, and written into its page. */
const uri = (text: string) => ({ toString: () => text }) as unknown as vscode.Uri;
const files = { root: uri('file:///ext/dist'), script: uri('file:///ext/dist/webview.js'), style: uri('file:///ext/dist/webview.css') };

function provider() {
  return new ChatViewProvider(files, newStore(), async () => undefined, () => undefined);
}

const types = (posted: unknown[]) => posted.map((message) => (message as { type: string }).type);

describe('ChatViewProvider', () => {
  it('lets the webview load only from the bundle folder, and gives its page the bundle\'s script and stylesheet', () => {
    const { view } = fakeView();
    provider().resolveWebviewView(view);
    expect(view.webview.options.localResourceRoots).toEqual([files.root]);
    expect(view.webview.html).toContain('src="file:///ext/dist/webview.js"');
    expect(view.webview.html).toContain('href="file:///ext/dist/webview.css"');
  });

  it('gives the composer the focus once a new webview is ready, when it was asked for before', () => {
    const chat = provider();
    const { view, posted, say } = fakeView();
    chat.resolveWebviewView(view);
    chat.focusComposer(); // Open Chat in a fresh window: the webview's script is not running yet
    expect(posted).toEqual([]);
    say({ type: 'ready' });
    expect(types(posted)).toEqual(['action', 'focusComposer']); // the state first, then the focus
    say({ type: 'ready' }); // a reload of the same webview: the focus was given already
    expect(types(posted)).toEqual(['action', 'focusComposer', 'action']);
  });

  it('puts the keyboard on the waiting card once a new webview is ready, when Alt+Shift+P came first', () => {
    const chat = provider();
    const { view, posted, say } = fakeView();
    chat.resolveWebviewView(view);
    chat.focusPendingCard();
    expect(posted).toEqual([]);
    say({ type: 'ready' });
    expect(types(posted)).toEqual(['action', 'focusPendingCard']);
    chat.focusPendingCard();
    expect(types(posted)).toEqual(['action', 'focusPendingCard', 'focusPendingCard']);
  });

  it('focuses a ready webview at once', () => {
    const chat = provider();
    const { view, posted, say } = fakeView();
    chat.resolveWebviewView(view);
    say({ type: 'ready' });
    chat.focusComposer();
    expect(types(posted)).toEqual(['action', 'focusComposer']);
  });
});
