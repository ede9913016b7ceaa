/**
 * The JSON-RPC connection to the sidecar, as the rest of the extension sees it. `languageClient.ts` implements it
 * with vscode-languageclient; tests implement it with fakes.
 */

import type { CancellationLike } from '../host';
import type { InitializationOptions } from '../protocol';

export interface RpcConnection {
  sendRequest<R>(method: string, params: unknown, token?: CancellationLike): Promise<R>;
  sendNotification(method: string, params: unknown): Promise<void>;
}

export type RequestHandler = (params: unknown, token: CancellationLike) => Promise<unknown>;
export type NotificationHandler = (params: unknown) => void;

export interface ServerInfo {
  name: string;
  version?: string;
}

/** How to start one sidecar process. */
export interface SidecarLaunch {
  command: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  initializationOptions: InitializationOptions;
}

/** One running (or starting) sidecar process and its connection. */
export interface SidecarConnection extends RpcConnection {
  /** Spawns the process; resolves once `initialize` has been answered. */
  start(): Promise<ServerInfo>;
  /** Asks the sidecar to shut down, and kills it if it has not exited within `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
}

export interface ConnectionHooks {
  /** The process exited or the connection broke, whether during start or later. */
  onClosed(reason: string): void;
  requestHandlers: ReadonlyMap<string, RequestHandler>;
  notificationHandlers: ReadonlyMap<string, NotificationHandler>;
}

export type ConnectionFactory = (launch: SidecarLaunch, hooks: ConnectionHooks) => SidecarConnection;

/** JSON-RPC's "method not found": the sidecar is older than this extension, or the feature is not built yet. */
export const METHOD_NOT_FOUND = -32601;

export function errorCode(error: unknown): number | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  }
  return undefined;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}
