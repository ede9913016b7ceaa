/**
 * The real sidecar connection: vscode-languageclient over the sidecar's stdio.
 *
 * The client never restarts by itself and never shows its own error pop-ups: SidecarManager decides about restarts
 * and the chat view shows what happened, in toolgate's words. The sidecar's stderr goes to the output channel.
 */

import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  TransportKind,
} from 'vscode-languageclient/node';
import type { CancellationToken, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import type { OutputChannel } from 'vscode';

import type { ConnectionFactory, SidecarConnection } from './rpc';

/** A LanguageClient that logs errors to the output channel only; the chat view reports them. */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

export function languageClientFactory(output: OutputChannel): ConnectionFactory {
  return (launch, hooks): SidecarConnection => {
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      transport: TransportKind.stdio,
      options: { cwd: launch.cwd, env: launch.env },
    };
    const clientOptions: LanguageClientOptions = {
      // The sidecar mirrors the editor's open files (to refuse writing a file with unsaved changes).
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: launch.initializationOptions,
      initializationFailedHandler: () => false,
      errorHandler: {
        error: (_error, _message, count) => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => {
          hooks.onClosed('the sidecar process exited');
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      connectionOptions: { maxRestartCount: 0 },
    };
    const client = new QuietLanguageClient('toolgate', 'toolgate', serverOptions, clientOptions);
    for (const [method, handler] of hooks.requestHandlers) {
      client.onRequest(method, (params: unknown, token) => handler(params, token));
    }
    for (const [method, handler] of hooks.notificationHandlers) {
      client.onNotification(method, (params: unknown) => handler(params));
    }
    return {
      async start() {
        await client.start();
        const info = client.initializeResult?.serverInfo;
        return { name: info?.name ?? 'toolgate', version: info?.version };
      },
      async stop(timeoutMs) {
        // dispose() also stops the process; it kills it when it does not exit within the timeout.
        if (client.needsStop()) await client.dispose(timeoutMs);
        else await client.dispose(0).catch(() => undefined);
      },
      sendRequest: (method, params, token) =>
        // CancellationLike is the same shape as vscode-jsonrpc's token (host.ts keeps the logic free of that import).
        token ? client.sendRequest(method, params, token as CancellationToken) : client.sendRequest(method, params),
      sendNotification: (method, params) => client.sendNotification(method, params),
    };
  };
}
