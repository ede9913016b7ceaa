/**
 * The sidecar's JSON-RPC protocol, as the extension sees it.
 *
 * HAND-WRITTEN STAND-IN. The sidecar defines every method with pydantic models (server/toolgate/sidecar/), and
 * `make protocol` generates the TypeScript types from their JSON Schema. When that exists, this file is replaced by
 * the generated one (re-exporting under these names), and the compiler shows every place that drifted.
 *
 * Method names and shapes follow issue 7 (sidecar) and issue 8 (agent loop). Fields that only the UI needs and that
 * the issues leave open are marked optional, so a sidecar that does not send them still works.
 */

// ---------------------------------------------------------------------------------------------------------------
// Method names
// ---------------------------------------------------------------------------------------------------------------

export const Methods = {
  toolsList: 'toolgate/tools/list',
  toolsRun: 'toolgate/tools/run',
  toolsProgress: 'toolgate/tools/progress',
  sessionNew: 'toolgate/session/new',
  sessionList: 'toolgate/session/list',
  sessionLoad: 'toolgate/session/load',
  sessionDelete: 'toolgate/session/delete',
  settingsGet: 'toolgate/settings/get',
  settingsAddRule: 'toolgate/settings/addRule',
  settingsRemoveRule: 'toolgate/settings/removeRule',
  settingsSetMode: 'toolgate/settings/setMode',
  permissionsCheck: 'toolgate/permissions/check',
  chatSend: 'toolgate/chat/send',
  chatInterrupt: 'toolgate/chat/interrupt',
  chatEvent: 'toolgate/chat/event',
  approvalRequest: 'toolgate/approval/request',
  diffReview: 'toolgate/diff/review',
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Shared vocabulary (mirrors server/toolgate/core/permission.py)
// ---------------------------------------------------------------------------------------------------------------

export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';
export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions'];

export type RuleScope = 'session' | 'local' | 'project' | 'user';
export const RULE_SCOPES: readonly RuleScope[] = ['session', 'local', 'project', 'user'];

export interface RuleSuggestion {
  rule: string;
  scope: RuleScope;
}

export type DiffReviewPolicy = 'always' | 'whenAsking';

// ---------------------------------------------------------------------------------------------------------------
// Initialization: what the extension hands the sidecar in `initialize.initializationOptions`
// ---------------------------------------------------------------------------------------------------------------

export interface InitializationOptions {
  provider: 'anthropic' | 'openai';
  /** Empty string: the sidecar's default model for the provider. */
  model: string;
  /** Empty string: the provider's public endpoint. */
  baseUrl: string;
  defaultMode: PermissionMode;
  diffReview: DiffReviewPolicy;
  maxToolConcurrency: number;
  /** Where sessions (transcripts, output store) live: the extension's workspace storage. */
  storageDir: string | null;
  /** The editor that hosts the sidecar, for logs and the system prompt. */
  client: { name: string; version: string; extensionVersion: string };
}

// ---------------------------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------------------------

export interface SessionInfo {
  sessionId: string;
  title: string;
  /** ISO 8601 */
  updatedAt: string;
  mode?: PermissionMode;
}

export interface SessionNewParams {
  mode?: PermissionMode;
}
export interface SessionNewResult {
  sessionId: string;
}

export interface SessionListResult {
  sessions: SessionInfo[];
}

export interface SessionLoadParams {
  sessionId: string;
}
/** The transcript comes back as the same events a live turn streams, so the UI has one way to draw it. */
export interface SessionLoadResult {
  session: SessionInfo;
  events: ChatEvent[];
}

export interface SessionDeleteParams {
  sessionId: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------------------------

export interface SettingsGetParams {
  sessionId?: string;
}
export interface SettingsFileInfo {
  scope: Exclude<RuleScope, 'session'>;
  path: string;
  exists: boolean;
}
export interface SettingsGetResult {
  mode: PermissionMode;
  rules: { allow: string[]; ask: string[]; deny: string[] };
  files?: SettingsFileInfo[];
}

export interface SettingsAddRuleParams {
  sessionId?: string;
  rule: string;
  behavior: 'allow' | 'ask' | 'deny';
  scope: RuleScope;
}
export interface SettingsAddRuleResult {
  /** A warning to show, for example when the rule lets the agent run arbitrary code. */
  warning?: string | null;
}

export interface SettingsSetModeParams {
  sessionId: string;
  mode: PermissionMode;
}

// ---------------------------------------------------------------------------------------------------------------
// Chat (issue 8)
// ---------------------------------------------------------------------------------------------------------------

export interface ChatSendParams {
  sessionId: string;
  text: string;
}
export interface ChatSendResult {
  stopReason: string;
}

export interface ChatInterruptParams {
  sessionId: string;
}

export type TodoStatus = 'pending' | 'in_progress' | 'completed';
export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
}

/** One element of the `toolgate/chat/event` notification stream. */
export type ChatEvent =
  | { type: 'user_message'; text: string }
  | { type: 'text_delta'; text: string }
  | { type: 'tool_started'; toolUseId: string; toolName: string; summary: string; input?: unknown }
  | { type: 'tool_progress'; toolUseId: string; kind: string; text: string }
  | { type: 'tool_finished'; toolUseId: string; isError: boolean; resultSummary: string; result?: string }
  | { type: 'todos'; todos: TodoItem[] }
  | { type: 'turn_end'; stopReason: string }
  | { type: 'error'; message: string };

export interface ChatEventParams {
  sessionId: string;
  event: ChatEvent;
}

/** `toolgate/tools/progress`: live output of a running tool (Bash). */
export interface ToolProgressParams {
  sessionId: string;
  toolUseId: string;
  kind: string;
  text: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Server → client requests: approvals and diff reviews
// ---------------------------------------------------------------------------------------------------------------

export interface ApprovalRequestParams {
  sessionId: string;
  toolUseId: string;
  toolName: string;
  input: Record<string, unknown>;
  summary: string;
  /** Why a person has to decide: shown on the card. */
  reason: string;
  suggestions: RuleSuggestion[];
}

export interface ApprovalAnswer {
  decision: 'allow' | 'deny';
  remember?: RuleSuggestion;
  feedback?: string;
}

export interface FileProposal {
  path: string;
  /** null: the file does not exist yet. */
  original: string | null;
  /** null: the call deletes the file. */
  proposed: string | null;
}

export interface DiffReviewParams {
  sessionId: string;
  toolUseId: string;
  title: string;
  files: FileProposal[];
  toolName?: string;
  reason?: string;
  suggestions?: RuleSuggestion[];
}

export interface ReviewedFile {
  path: string;
  /** The final text the person accepted; null: the deletion stands. */
  content: string | null;
}

export interface DiffReviewAnswer {
  decision: 'accept' | 'reject';
  files?: ReviewedFile[];
  remember?: RuleSuggestion;
  feedback?: string;
}
