import type * as vscode from 'vscode';
import { describe, expect, it } from 'vitest';

import { ChatViewProvider } from '../src/chatView';
import { newStore } from './fakes';
import * as mock from './vscodeMock';

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

function provider() {
  const extensionUri = mock.Uri.from({ scheme: 'file', path: '/ext' }) as unknown as vscode.Uri;
  return new ChatViewProvider(extensionUri, newStore(), async () => undefined, () => undefined);
}

const types = (posted: unknown[]) => posted.map((message) => (message as { type: string }).type);

describe('ChatViewProvider', () => {
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

  it('focuses a ready webview at once', () => {
    const chat = provider();
    const { view, posted, say } = fakeView();
    chat.resolveWebviewView(view);
    say({ type: 'ready' });
    chat.focusComposer();
    expect(types(posted)).toEqual(['action', 'focusComposer']);
  });
});
