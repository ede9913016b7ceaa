/**
 * Every custom sidecar method, typed. This is the one place that knows method names and shapes (from protocol.ts);
 * the rest of the extension calls these functions and registers these handlers.
 *
 * A call made while no sidecar runs fails with `SidecarUnavailable`; a method the running sidecar does not know
 * fails with `NotSupported`. Both carry a sentence the chat can show as it is.
 */

import type { CancellationLike } from '../host';
import type {
  Attachment,
  ModelsListResult,
  ModelsSelectResult,
  ApprovalAnswer,
  ApprovalRequestParams,
  ChatCompactResult,
  ChatEventParams,
  ChatHistoryResult,
  ChatInterruptResult,
  ChatSendResult,
  CheckpointFileResult,
  CheckpointsDiffResult,
  CheckpointsListResult,
  CheckpointsRestoreResult,
  DiffReviewAnswer,
  McpChangedParams,
  McpLogResult,
  McpServerResult,
  McpServersResult,
  DiffReviewParams,
  PendingCall,
  PermissionCheckResult,
  PermissionMode,
  ProviderConfigureParams,
  ReviewEdits,
  RuleBehavior,
  RuleChangeResult,
  RuleScope,
  SessionExportResult,
  SessionInfo,
  SidecarProviderStatus,
  SessionListResult,
  SessionRenameResult,
  SessionSearchResult,
  Settings,
  StandInsParams,
  ToolProgressParams,
} from '../protocol';
import type { ExportFormat } from '../shared/messages';
import type {
  ChangesListResult,
  ChangesUndoResult,
  ChangesWithoutResult,
  EditorProblemsParams,
  EditorProblemsResult,
  HooksListResult,
  HunkInfo,
} from '../protocol.generated';
import { Methods } from '../protocol';
import { errorCode, errorMessage, METHOD_NOT_FOUND } from './rpc';
import type { RpcConnection } from './rpc';

export class SidecarUnavailable extends Error {
  constructor() {
    super('The toolgate sidecar is not running. Its status is shown at the top of the chat.');
  }
}

export class NotSupported extends Error {
  constructor(readonly method: string) {
    super(
      `The running toolgate sidecar does not offer ${method} yet. Update the toolgate Python package to the ` +
        `version that matches this extension, then restart the sidecar.`,
    );
  }
}

export class SidecarError extends Error {
  constructor(
    readonly method: string,
    message: string,
    readonly code: number | undefined,
    /** The sidecar's own words, without the method's name (for messages about the person's input). */
    readonly reason: string = message,
  ) {
    super(message);
  }
}

/** What a failed request should say to a person: the sidecar's reason when it gave one. */
export function failureReason(error: unknown): string {
  return error instanceof SidecarError ? error.reason : errorMessage(error);
}

/** Where handlers for server → client messages are registered (SidecarManager, for every process it starts). */
export interface HandlerRegistry {
  onRequest(method: string, handler: (params: unknown, token: CancellationLike) => Promise<unknown>): void;
  onNotification(method: string, handler: (params: unknown) => void): void;
}

export class SidecarClient {
  constructor(
    private readonly connection: () => RpcConnection | undefined,
    private readonly handlers: HandlerRegistry,
  ) {}

  // -- client → server ---------------------------------------------------------------------------------------------

  newSession(mode: PermissionMode, reviewEdits: ReviewEdits): Promise<SessionInfo> {
    return this.request(Methods.sessionNew, { mode, reviewEdits });
  }

  listSessions(): Promise<SessionListResult> {
    return this.request(Methods.sessionList, {});
  }

  loadSession(sessionId: string): Promise<SessionInfo> {
    return this.request(Methods.sessionLoad, { sessionId });
  }

  deleteSession(sessionId: string): Promise<void> {
    return this.request(Methods.sessionDelete, { sessionId });
  }

  renameSession(sessionId: string, title: string): Promise<SessionRenameResult> {
    return this.request(Methods.sessionRename, { sessionId, title });
  }

  searchSessions(query: string): Promise<SessionSearchResult> {
    return this.request(Methods.sessionSearch, { query });
  }

  exportSession(sessionId: string, format: ExportFormat): Promise<SessionExportResult> {
    return this.request(Methods.sessionExport, { sessionId, format });
  }

  /** Attachments are sent only when there are some: a sidecar from before them refuses the unknown key. */
  send(sessionId: string, text: string, attachments: readonly Attachment[] = [], token?: CancellationLike): Promise<ChatSendResult> {
    const params = attachments.length > 0 ? { sessionId, text, attachments } : { sessionId, text };
    return this.request(Methods.chatSend, params, token);
  }

  listModels(configured: readonly string[]): Promise<ModelsListResult> {
    return this.request(Methods.modelsList, { configured });
  }

  selectModel(model: string): Promise<ModelsSelectResult> {
    return this.request(Methods.modelsSelect, { model });
  }

  interrupt(sessionId: string): Promise<ChatInterruptResult> {
    return this.request(Methods.chatInterrupt, { sessionId });
  }

  compact(sessionId: string, focus: string | null): Promise<ChatCompactResult> {
    return this.request(Methods.chatCompact, { sessionId, focus });
  }

  history(sessionId: string): Promise<ChatHistoryResult> {
    return this.request(Methods.chatHistory, { sessionId });
  }

  configureProvider(params: ProviderConfigureParams): Promise<SidecarProviderStatus> {
    return this.request(Methods.providerConfigure, params);
  }

  providerStatus(): Promise<SidecarProviderStatus> {
    return this.request(Methods.providerStatus, {});
  }

  getSettings(sessionId: string): Promise<Settings> {
    return this.request(Methods.settingsGet, { sessionId });
  }

  /** `toolUseId`: the waiting call the mode is changed to answer (its answer then records the switch). */
  setMode(sessionId: string, mode: PermissionMode, toolUseId?: string): Promise<Settings> {
    return this.request(Methods.settingsSetMode, toolUseId ? { sessionId, mode, toolUseId } : { sessionId, mode });
  }

  setReviewEdits(sessionId: string, reviewEdits: ReviewEdits): Promise<Settings> {
    return this.request(Methods.settingsSetReviewEdits, { sessionId, reviewEdits });
  }

  /**
   * Add a permission rule; an invalid rule or a broken settings file fails with the sidecar's reason. With `call`
   * (the call waiting for approval), the result's `coversCall` says whether the rules now allow it.
   */
  addRule(sessionId: string, rule: string, behavior: RuleBehavior, scope: RuleScope, call?: PendingCall): Promise<RuleChangeResult> {
    return this.request(Methods.settingsAddRule, call ? { sessionId, rule, behavior, scope, call } : { sessionId, rule, behavior, scope });
  }

  /** What the permission engine would decide for a call (runs nothing); `withAllow`: as if that rule were saved. */
  checkPermission(sessionId: string, call: PendingCall, withAllow?: string): Promise<PermissionCheckResult> {
    const params = { sessionId, tool: call.tool, input: call.input };
    return this.request(Methods.permissionsCheck, withAllow === undefined ? params : { ...params, withAllow });
  }

  removeRule(sessionId: string, rule: string, behavior: RuleBehavior, scope: RuleScope): Promise<RuleChangeResult> {
    return this.request(Methods.settingsRemoveRule, { sessionId, rule, behavior, scope });
  }

  // Hooks of a session, and trusting the workspace's (hookReview.ts).
  hooksList(sessionId: string): Promise<HooksListResult> {
    return this.request(Methods.hooksList, { sessionId });
  }

  hooksTrust(sessionId: string, ids: string[]): Promise<HooksListResult> {
    return this.request(Methods.hooksTrust, { sessionId, ids });
  }

  // MCP servers of a session (the MCP view, mcpView.ts).
  mcpServers(sessionId: string): Promise<McpServersResult> {
    return this.request(Methods.mcpServers, { sessionId });
  }

  mcpApprove(sessionId: string, name: string): Promise<McpServerResult> {
    return this.request(Methods.mcpApprove, { sessionId, name });
  }

  mcpRevoke(sessionId: string, name: string): Promise<McpServerResult> {
    return this.request(Methods.mcpRevoke, { sessionId, name });
  }

  mcpRestart(sessionId: string, name: string): Promise<McpServerResult> {
    return this.request(Methods.mcpRestart, { sessionId, name });
  }

  mcpLog(sessionId: string, name: string): Promise<McpLogResult> {
    return this.request(Methods.mcpLog, { sessionId, name });
  }

  listCheckpoints(sessionId: string): Promise<CheckpointsListResult> {
    return this.request(Methods.checkpointsList, { sessionId });
  }

  /** `to` absent: what restoring `checkpointId` would do to the files now; with `to`: that stretch's changes. */
  checkpointDiff(sessionId: string, checkpointId: string, to?: string): Promise<CheckpointsDiffResult> {
    return this.request(Methods.checkpointsDiff, to ? { sessionId, checkpointId, to } : { sessionId, checkpointId });
  }

  checkpointFile(sessionId: string, checkpointId: string, path: string): Promise<CheckpointFileResult> {
    return this.request(Methods.checkpointsFile, { sessionId, checkpointId, path });
  }

  restoreCheckpoint(sessionId: string, checkpointId: string, what: 'code' | 'conversation' | 'both'): Promise<CheckpointsRestoreResult> {
    return this.request(Methods.checkpointsRestore, { sessionId, checkpointId, what });
  }

  /** The changes bar: the agent's changes of the last turns, per file and hunk. */
  listChanges(sessionId: string): Promise<ChangesListResult> {
    return this.request(Methods.changesList, { sessionId });
  }

  /** Keep (accept) a file's changes, or one hunk of them; the listing after it. */
  keepChange(sessionId: string, path: string, hunk?: HunkInfo): Promise<ChangesListResult> {
    return this.request(Methods.changesKeep, hunk ? { sessionId, path, hunk } : { sessionId, path });
  }

  /** Undo one hunk (`hunk`), one file (`path`) or every file (neither). */
  undoChange(sessionId: string, target: { path?: string; hunk?: HunkInfo; takeUndo?: boolean }): Promise<ChangesUndoResult> {
    return this.request(Methods.changesUndo, { sessionId, ...target });
  }

  /** A file without the agent's changes (the left side of its diff in the bar). */
  changesWithout(sessionId: string, path: string): Promise<ChangesWithoutResult> {
    return this.request(Methods.changesWithout, { sessionId, path });
  }

  // -- server → client ---------------------------------------------------------------------------------------------

  onApprovalRequest(handler: (params: ApprovalRequestParams, token: CancellationLike) => Promise<ApprovalAnswer>): void {
    this.handlers.onRequest(Methods.approvalRequest, (params, token) => handler(params as ApprovalRequestParams, token));
  }

  onDiffReview(handler: (params: DiffReviewParams, token: CancellationLike) => Promise<DiffReviewAnswer>): void {
    this.handlers.onRequest(Methods.diffReview, (params, token) => handler(params as DiffReviewParams, token));
  }

  onEditorProblems(handler: (params: EditorProblemsParams, token: CancellationLike) => Promise<EditorProblemsResult>): void {
    this.handlers.onRequest(Methods.editorProblems, (params, token) => handler(params as EditorProblemsParams, token));
  }

  onChatEvent(handler: (params: ChatEventParams) => void): void {
    this.handlers.onNotification(Methods.chatEvent, (params) => handler(params as ChatEventParams));
  }

  onToolProgress(handler: (params: ToolProgressParams) => void): void {
    this.handlers.onNotification(Methods.toolsProgress, (params) => handler(params as ToolProgressParams));
  }

  onMcpChanged(handler: (params: McpChangedParams) => void): void {
    this.handlers.onNotification(Methods.mcpChanged, (params) => handler(params as McpChangedParams));
  }

  onStandIns(handler: (params: StandInsParams) => void): void {
    this.handlers.onNotification(Methods.sandboxStandIns, (params) => handler(params as StandInsParams));
  }

  private async request<R>(method: string, params: unknown, token?: CancellationLike): Promise<R> {
    const connection = this.connection();
    if (!connection) throw new SidecarUnavailable();
    try {
      return await connection.sendRequest<R>(method, params, token);
    } catch (error) {
      const code = errorCode(error);
      if (code === METHOD_NOT_FOUND) throw new NotSupported(method);
      throw new SidecarError(method, `${method} failed: ${errorMessage(error)}`, code, errorMessage(error));
    }
  }
}
