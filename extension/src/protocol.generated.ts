// Generated from the sidecar's protocol models (server/toolgate/sidecar/protocol.py).
// Do not edit: run `make protocol`. A test fails when this file is out of date.

export const PROTOCOL_VERSION = 1;

export interface ApprovalParams {
  sessionId: string;
  toolUseId: string;
  toolName: string;
  input: Record<string, unknown>;
  /** One line a person can read. */
  summary: string;
  /** Why approval is needed. */
  reason: string;
  /** Rules the UI may offer as 'always allow'. */
  suggestions: RuleSuggestionOutput[];
}

export interface ApprovalResult {
  decision: "allow" | "deny";
  /** With allow: keep allowing calls like this. */
  remember?: RuleSuggestionInput | null;
  /** What the user said; passed on to the model. */
  feedback?: string | null;
}

export interface DiffReviewParams {
  sessionId: string;
  toolUseId: string;
  toolName: string;
  title: string;
  reason: string;
  /** original null: a new file; proposed null: a deletion. */
  files: FileProposal[];
  suggestions: RuleSuggestionOutput[];
}

export interface DiffReviewResult {
  decision: "accept" | "reject";
  /** The final contents the user accepted; absent: accepted as proposed. */
  files?: ReviewedFile[] | null;
  remember?: RuleSuggestionInput | null;
  feedback?: string | null;
}

/** No parameters, or no data in the result. */
export type Empty = Record<string, never>;

/** One file a call proposes to change: `original` None = a new file; `proposed` None = a deletion. */
export interface FileProposal {
  path: string;
  original: string | null;
  proposed: string | null;
}

export interface ImageBlock {
  type: "image";
  source: ImageSource;
}

export interface ImageSource {
  type: "base64";
  media_type: string;
  data: string;
}

/**
 * `initializationOptions` of the LSP initialize request. Unknown keys are ignored here: a failed
 * initialize leaves the editor with no sidecar at all, which is worse than an ignored option.
 */
export interface InitializationOptions {
  /** Where sessions live (the editor's storage directory); default: $XDG_DATA_HOME/toolgate. */
  storageDir?: string | null;
}

export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions";

export interface ReviewedFile {
  path: string;
  content: string | null;
}

/** A rule the UI can offer as "always allow", and the scope it would be saved in. */
export interface RuleSuggestionInput {
  rule: string;
  scope?: "session" | "local" | "project" | "user";
}

/** A rule the UI can offer as "always allow", and the scope it would be saved in. */
export interface RuleSuggestionOutput {
  rule: string;
  scope: "session" | "local" | "project" | "user";
}

export interface SessionInfo {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  workspace: string;
  mode: PermissionMode;
  reviewEdits: "when_asking" | "always";
  title: string;
  createdAt: string;
  updatedAt: string;
  /** True when the session is open in this sidecar process. */
  live: boolean;
}

export interface SessionListResult {
  /** Most recently updated first. */
  sessions: SessionInfo[];
}

export interface SessionNewParams {
  /** Absolute path of the workspace; default: the first workspace folder. */
  workspace?: string | null;
  mode?: PermissionMode;
  reviewEdits?: "when_asking" | "always";
  title?: string;
}

export interface SessionRef {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
}

export interface SetModeParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  mode: PermissionMode;
}

export interface SetReviewEditsParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  reviewEdits: "when_asking" | "always";
}

export interface Settings {
  sessionId: string;
  mode: PermissionMode;
  /** when_asking: a diff is reviewed only when the edit needs approval; always: every edit. */
  reviewEdits: "when_asking" | "always";
}

export interface TextBlock {
  type: "text";
  text: string;
}

/** What a model is told about a tool (Anthropic's tool shape; other providers convert from it). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** Live output from a running call (for example a command's output as it is produced). */
export interface ToolProgress {
  sessionId: string;
  toolUseId: string;
  kind: string;
  text: string;
}

export interface ToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: string | (TextBlock | ImageBlock)[];
  is_error: boolean;
}

/** One tool call as the model wrote it. `input` stays untyped here: the runner validates it per tool. */
export interface ToolUse {
  type?: "tool_use";
  id: string;
  name: string;
  input?: unknown;
}

export interface ToolsListParams {
  /** Describe the tools as this session sees them (its mode and workspace). */
  sessionId?: string | null;
}

export interface ToolsListResult {
  /** Built-in tools first (sorted), then external tools (sorted). */
  tools: ToolDefinition[];
}

export interface ToolsRunParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** One assistant turn's tool_use blocks, in the model's order. */
  calls: ToolUse[];
}

export interface ToolsRunResult {
  /** Exactly one tool_result per call, in the calls' order. */
  results: ToolResult[];
}

/** Every method name, by a short constant name. */
export const Methods = {
  ping: "toolgate/ping",
  toolsList: "toolgate/tools/list",
  toolsRun: "toolgate/tools/run",
  toolsProgress: "toolgate/tools/progress",
  sessionNew: "toolgate/session/new",
  sessionList: "toolgate/session/list",
  sessionLoad: "toolgate/session/load",
  sessionDelete: "toolgate/session/delete",
  settingsGet: "toolgate/settings/get",
  settingsSetMode: "toolgate/settings/setMode",
  settingsSetReviewEdits: "toolgate/settings/setReviewEdits",
  approvalRequest: "toolgate/approval/request",
  diffReview: "toolgate/diff/review",
} as const;

/** Requests the extension sends; the sidecar answers. */
export interface ClientRequests {
  /** Does nothing; for liveness checks and latency baselines. */
  "toolgate/ping": { params: Empty; result: Empty };
  /** The tool definitions a model sees. */
  "toolgate/tools/list": { params: ToolsListParams; result: ToolsListResult };
  /** Run one turn's tool calls. */
  "toolgate/tools/run": { params: ToolsRunParams; result: ToolsRunResult };
  /** Start a session. */
  "toolgate/session/new": { params: SessionNewParams; result: SessionInfo };
  /** Every session under the data root. */
  "toolgate/session/list": { params: Empty; result: SessionListResult };
  /** Open a saved session. */
  "toolgate/session/load": { params: SessionRef; result: SessionInfo };
  /** Close a session and delete its files. */
  "toolgate/session/delete": { params: SessionRef; result: Empty };
  /** A session's settings. */
  "toolgate/settings/get": { params: SessionRef; result: Settings };
  /** Change the permission mode. */
  "toolgate/settings/setMode": { params: SetModeParams; result: Settings };
  /** Review every edit, or only edits that need approval. */
  "toolgate/settings/setReviewEdits": { params: SetReviewEditsParams; result: Settings };
}

/** Requests the sidecar sends; the extension answers. */
export interface ServerRequests {
  /** Ask the user to allow a call. */
  "toolgate/approval/request": { params: ApprovalParams; result: ApprovalResult };
  /** Show a proposed change for review. */
  "toolgate/diff/review": { params: DiffReviewParams; result: DiffReviewResult };
}

/** Notifications the sidecar sends. */
export interface ServerNotifications {
  /** Live output from a running call. */
  "toolgate/tools/progress": ToolProgress;
}
