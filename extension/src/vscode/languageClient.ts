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
} from 'vscode-languageclient/node';
import type { CancellationToken, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import type { OutputChannel } from 'vscode';

import type { ConnectionFactory, SidecarConnection } from '../sidecar/rpc';
import { describeExit, SidecarProcess } from '../sidecar/sidecarProcess';

/** How long a sidecar that was asked to exit gets before it is sent SIGTERM, and then SIGKILL. */
const TERMINATE_GRACE_MS = 1000;
/** How long to wait for the exit status of a sidecar whose connection just broke. */
const EXIT_WAIT_MS = 500;

function settleWithin<T>(promise: Promise<T> | undefined, ms: number): Promise<T | undefined> {
  if (!promise) return Promise.resolve(undefined);
  return Promise.race([promise, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref())]);
}

/** A LanguageClient that logs errors to the output channel only; the chat view reports them. */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

export function languageClientFactory(output: OutputChannel): ConnectionFactory {
  return (launch, hooks): SidecarConnection => {
    let process: SidecarProcess | undefined;
    // We spawn the process ourselves (the client then talks over its stdio and copies its stderr to the output
    // channel): that way its exit status is ours to report, and it can be killed in any client state.
    const serverOptions: ServerOptions = async () => {
      process = SidecarProcess.spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env });
      void process.exited.then((exit) => hooks.onClosed(describeExit(exit)));
      return process.child;
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
          // The process's own exit (reported when it happens) says more; this covers a sidecar that closed its
          // end of the connection and lingers.
          void settleWithin(process?.exited, EXIT_WAIT_MS).then((exit) => {
            hooks.onClosed(exit ? describeExit(exit) : 'the sidecar closed the connection');
            if (!exit) void process?.terminate(TERMINATE_GRACE_MS);
          });
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
        try {
          await client.start();
          // client.start() can resolve even though the server died during start-up (when the connection closes
          // before the start completes, it returns the cleared start promise): check that it really runs.
          if (!client.isRunning()) throw new Error('the sidecar did not finish starting');
        } catch (error) {
          // Usually the process died during start-up: its exit status explains more than the client's error.
          const exit = await settleWithin(process?.exited, EXIT_WAIT_MS);
          if (exit) throw new Error(describeExit(exit));
          await process?.terminate(TERMINATE_GRACE_MS);
          throw error;
        }
        const info = client.initializeResult?.serverInfo;
        return { name: info?.name ?? 'toolgate', version: info?.version };
      },
      async stop(timeoutMs) {
        // A running sidecar is asked to shut down and exit (LSP shutdown + exit); one that does not, or that never
        // finished starting, is terminated.
        if (client.isRunning()) await client.stop(timeoutMs).catch(() => undefined);
        await process?.terminate(TERMINATE_GRACE_MS);
      },
      sendRequest: (method, params, token) =>
        // CancellationLike is the same shape as vscode-jsonrpc's token (host.ts keeps the logic free of that import).
        token ? client.sendRequest(method, params, token as CancellationToken) : client.sendRequest(method, params),
      sendNotification: (method, params) => client.sendNotification(method, params),
    };
  };
}
