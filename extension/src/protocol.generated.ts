// Generated from the sidecar's protocol models (server/toolgate/sidecar/protocol.py).
// Do not edit: run `make protocol`. A test fails when this file is out of date.

export const PROTOCOL_VERSION = 1;

/** The approval card on the wire: the runner's ApprovalRequest, camelCase. */
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
  suggestions: RuleSuggestion[];
  /** acceptEdits mode would allow this call. */
  offersAcceptEdits: boolean;
  /** The child agent that asks (null: the session's own agent or a direct call). */
  subagent: SubagentRef | null;
}

export interface ApprovalRecord {
  tool_use_id: string;
  tool_name: string;
  reason: string;
  answered_by: "user" | "non_interactive" | "unavailable" | "withdrawn";
  feedback: string | null;
  accepted_edits: boolean;
  kind: "approval";
  summary: string;
  decision: "allow" | "deny";
  saved_rule: SavedRule | null;
}

export interface ApprovalResult {
  decision: "allow" | "deny";
  /** What the user said; passed on to the model. */
  feedback?: string | null;
}

/**
 * Context the person attached to a message, named, never carried: the sidecar reads files and folders itself
 * (the live buffer for a file with unsaved changes, else the disk), and asks the editor for the problems the way
 * the Problems tool does (`toolgate/editor/problems`).
 */
export interface Attachment {
  kind: "file" | "selection" | "folder" | "problems";
  /** Absolute path; required except for problems (none: the whole workspace's). */
  path?: string | null;
  /** A selection's first line, 1-based. */
  startLine?: number | null;
  /** A selection's last line, inclusive. */
  endLine?: number | null;
  /** What the person picked (a symbol's name). */
  label?: string | null;
}

export interface CallSummary {
  summary: string;
  result_summary: string | null;
}

export interface ChangedFileInfo {
  /** Relative to the workspace (absolute for an additional working directory). */
  path: string;
  status: "created" | "removed" | "modified";
  added: number;
  removed: number;
  /** Empty for a binary file and for a conflict: undone whole or not at all. */
  hunks: HunkInfo[];
  /** Why the agent's change cannot be taken out as the file is now: the person edited the same lines. Keep mine, take the undo (takeUndo), or merge by hand. */
  conflict: string | null;
  /** Names the file's content now; it changes when the file does. */
  version: string;
}

export interface ChangesKeepParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  path: string;
  hunk?: HunkInfo | null;
}

export interface ChangesListParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
}

export interface ChangesListResult {
  enabled: boolean;
  reason: string | null;
  since: string | null;
  files: ChangedFileInfo[];
  notUndoable: string[];
}

export interface ChangesUndoParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  path?: string | null;
  hunk?: HunkInfo | null;
  takeUndo?: boolean;
}

export interface ChangesUndoResult {
  undone: boolean;
  reason: string | null;
  redo: string | null;
  files: string[];
  conflicts: UndoConflict[];
}

export interface ChangesWithoutParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  path: string;
}

/**
 * The file as it would be without the agent's changes the bar shows: the left side of its diff. For a conflict:
 * the file as taking the undo would make it (the side a merge by hand starts from).
 */
export interface ChangesWithoutResult {
  exists: boolean;
  content: string;
  binary: boolean;
}

export interface ChatCompactParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** What the summary should keep in view (`/compact focus`). */
  focus?: string | null;
}

export interface ChatCompactResult {
  /** False when it could not be done (a compaction_failed event says why). */
  compacted: boolean;
}

export interface ChatEventParams {
  sessionId: string;
  event: RequestStarted | TextDelta | MessageAdded | ToolCallStarted | ToolCallProgress | ToolCallFinished | TodoUpdate | Retrying | ContextCleared | HookReport | Compacted | CompactionFailed | UsageReport | ErrorEvent | SubagentEvent | TurnEnd;
}

export interface ChatHistoryResult {
  /** The whole conversation as the transcript keeps it (Anthropic message shapes), summarised messages included: the compactions say which ones the model sees only through a summary. */
  messages: ChatMessage[];
  todos: TodoItem[];
  /** A message is being answered right now. */
  busy: boolean;
  /** How each approval and diff review was answered, in the order answered. */
  decisions: (ApprovalRecord | ReviewRecord)[];
  /** By tool_use id: the one-line summaries its card showed live. */
  calls: Record<string, CallSummary>;
  /** Where the conversation was summarised, in `messages`' terms, oldest first. */
  compactions: CompactionMark[];
  /** By Agent tool_use id: what its child agent did, to draw its card again. A run that never ended comes as interrupted unless it runs right now (its stop_reason is then null). */
  subagents: Record<string, SubagentRun>;
}

export interface ChatInterruptResult {
  /** False when no message was being answered. */
  interrupted: boolean;
}

export interface ChatMessage {
  role: "user" | "assistant";
  content: (TextBlock | ImageBlock | ToolUseOutput | ToolResult)[];
}

export interface ChatSendParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** The user's message. */
  text: string;
  /** What the person attached to it. */
  attachments?: Attachment[];
}

export interface ChatSendResult {
  /** Why the answer ended (end_turn, interrupted, error, ...). */
  stopReason: "end_turn" | "max_tokens" | "max_turns" | "interrupted" | "error" | "prompt_blocked";
}

export interface CheckpointFileParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  checkpointId: string;
  path: string;
}

export interface CheckpointFileResult {
  exists: boolean;
  content: string;
  binary: boolean;
}

/** One checkpoint; `changed`: files changed since the session's previous one; `skipped`: not captured. */
export interface CheckpointInfo {
  id: string;
  turn: number;
  toolUseId: string | null;
  kind: "turn" | "tool" | "restore";
  time: string;
  changed: string[];
  skipped: SkippedFile[];
  note: string | null;
  conversation: boolean;
}

export interface CheckpointsDiffParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  checkpointId: string;
  to?: string | null;
}

export interface CheckpointsDiffResult {
  files: FileChange[];
  diff: string;
  unsaved: string[];
}

export interface CheckpointsListResult {
  enabled: boolean;
  reason: string | null;
  checkpoints: CheckpointInfo[];
  turns: TurnInfo[];
}

export interface CheckpointsRestoreParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  checkpointId: string;
  what?: "code" | "conversation" | "both";
}

export interface CheckpointsRestoreResult {
  restored: boolean;
  reason: string | null;
  redo: string | null;
  files: FileChange[];
  conversationRestored: boolean;
  entriesRemoved: number | null;
}

/**
 * The older part of the conversation was replaced by a summary (agent/compaction.py): `summarised` messages
 * went, `kept` recent ones stayed verbatim. Token counts are estimates of the conversation's size.
 */
export interface Compacted {
  type: "compacted";
  trigger: "auto" | "overflow" | "manual";
  summarised: number;
  kept: number;
  tokens_before: number;
  tokens_after: number;
  seconds: number;
  summary: string;
  reattached: string[];
  forgotten: string[];
  summary_usage: Usage;
  kept_from_tool_use_id: string | null;
}

export interface CompactionFailed {
  type: "compaction_failed";
  trigger: "auto" | "overflow" | "manual";
  message: string;
}

/** Where a compaction happened in the full history (`LoadedTranscript.history`), for the panel and exports. */
export interface CompactionMark {
  /** It happened after this many messages of the full history. */
  after_messages: number;
  /** The first this many messages of the full history were summarised. */
  summarised_messages: number;
  trigger: "auto" | "overflow" | "manual";
  /** What the model went on from: the summary message's text. */
  summary: string;
  at: string;
}

/**
 * The request did not fit the context window: the outputs of `cleared` older tool calls were cleared (see
 * `context_relief`) and the request is sent again.
 */
export interface ContextCleared {
  type: "context_cleared";
  cleared: number;
  message: string;
}

/** The diff review card on the wire: the runner's ReviewRequest, camelCase. */
export interface DiffReviewParams {
  sessionId: string;
  toolUseId: string;
  toolName: string;
  title: string;
  /** Why it is reviewed: the approval reason, or that edits are always reviewed. */
  reason: string;
  /** original null: a new file; proposed null: a deletion. */
  files: FileProposal[];
  /** Rules the UI may offer as 'always allow'. */
  suggestions: RuleSuggestion[];
  /** acceptEdits mode would allow these changes. */
  offersAcceptEdits: boolean;
}

export interface DiffReviewResult {
  decision: "accept" | "reject";
  /** The final contents the user accepted; absent: accepted as proposed. */
  files?: ReviewedFile[] | null;
  feedback?: string | null;
  /** Comments on lines of the proposals. */
  notes?: ReviewNote[];
}

export interface EditorProblem {
  /** 0-based line of the problem's start. */
  line: number;
  /** 0-based UTF-16 offset of the problem's start in its line. */
  character: number;
  severity: "error" | "warning" | "information" | "hint";
  message: string;
  source?: string | null;
  code?: string | null;
}

export interface EditorProblemsParams {
  /** The files to report on; None: every file the editor has problems for (no waiting). */
  files: ProblemsFileRequest[] | null;
  /** Wait (bounded by the editor's toolgate.problems.waitSeconds setting) for the language servers to settle; False: answer with what they reported so far, except for files the editor did not have open. */
  wait: boolean;
  /** A language server not heard from yet in this window (it may be loading its project) gets the whole wait to report; False: a short one (the baseline asked for before an edit). */
  patient: boolean;
}

export interface EditorProblemsResult {
  files: FileProblemsAnswer[];
  /** The bound the editor waited within (its setting). */
  waitedSeconds: number;
}

/** No parameters, or no data in the result. */
export type Empty = Record<string, never>;

export interface ErrorEvent {
  type: "error";
  kind: "rate_limit" | "overloaded" | "server" | "connection" | "auth" | "context_too_long" | "bad_request" | "not_found" | "config";
  message: string;
}

export interface FileChange {
  path: string;
  action: "write" | "remove" | "link";
}

export interface FileProblemsAnswer {
  path: string;
  /** Some language server reports problems for files like this one (it reported for this file or its language, or an extension for the language is active). False: nothing was waited for. */
  covered: boolean;
  /** The editor had the requested content and its problems stopped changing within the wait. */
  settled: boolean;
  /** The editor's buffer held the requested content (contentSha256) at some point of the wait. False: it never took it (its file watcher had not reported the change), so the problems are the old content's. Absent: the editor does not tell (taken as loaded). */
  loaded?: boolean;
  /** A language server has reported in this window on this file or another file of its language (the server is up). False: none has, not even during the wait, so an empty list may only mean it is still starting. Absent: the editor does not tell (taken as heard). */
  heardFromServer?: boolean;
  problems: EditorProblem[];
}

/** One file a call proposes to change: `original` None = a new file; `proposed` None = a deletion. */
export interface FileProposal {
  path: string;
  original: string | null;
  proposed: string | null;
}

export interface FileTextEdits {
  path: string;
  edits: TextEditModel[];
}

export interface HookInfo {
  /** What names the hook: the first characters of its digest. */
  id: string;
  event: string;
  matcher: string;
  /** The exact command, to be read before it is trusted. */
  command: string;
  /** user, flag, project or local. */
  source: string;
  /** The settings file it comes from. */
  path: string | null;
  /** own: from the person's settings, runs; trusted: a reviewed workspace hook, runs; waiting: a new or changed workspace hook, does not run until trusted; workspace_not_trusted: never runs here. */
  state: "own" | "trusted" | "waiting" | "workspace_not_trusted";
}

/**
 * A hook of the session's lifecycle had a say the person should see: it blocked the prompt, asked the model to
 * continue (or was refused that, past the bound), failed, or left a notice. `message` names the hook.
 */
export interface HookReport {
  type: "hook";
  event: string;
  outcome: "blocked" | "continued" | "limit" | "problem" | "notice";
  message: string;
}

export interface HooksListParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
}

export interface HooksListResult {
  hooks: HookInfo[];
}

export interface HooksTrustParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** Ids of workspace hooks the person reviewed. */
  ids: string[];
}

/**
 * A run of lines the agent changed: lines `oldStart`… (0-based) of the file without the agent's change became
 * lines `newStart`… of the file now. Each line keeps its ending. `before`/`after`: unchanged lines around it,
 * by which an undo finds it again.
 */
export interface HunkInfo {
  oldStart: number;
  oldLines: string[];
  newStart: number;
  newLines: string[];
  before: string[];
  after: string[];
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
  /** How long an approval or diff review waits for the editor's answer before it counts as "no" (the call does not run, and the session goes on); default: one hour. */
  editorAnswerTimeoutSeconds?: number;
  /** The editor answers toolgate/editor/problems: its sessions get the Problems tool, and each edit's result ends with the problems it introduced. */
  editorProblems?: boolean;
}

/** What the language features said. `provided` false: no provider answers this for this document. */
export interface IntelAnswerResult {
  /** False: no language feature in the editor answers this for this document. */
  provided: boolean;
  locations?: IntelLocation[];
  /** hover: the texts shown (markdown or plain). */
  hover?: string[];
  /** rename: the edit of each file. */
  edits?: FileTextEdits[];
  /** The language feature's own reason for not answering (e.g. not renameable here). */
  refused?: string | null;
}

/** No parameters. */
export type IntelLanguagesParams = Record<string, never>;

export interface IntelLanguagesResult {
  /** Language ids (typescript, python, …) the editor has definition/reference providers for. */
  languages: string[];
}

/** A place the answer points at: a definition, a reference, a symbol, a caller or a callee. */
export interface IntelLocation {
  /** Absolute path of the file. */
  path: string;
  span: Span;
  /** The symbol's name (symbols, call hierarchy). */
  name?: string | null;
  /** The symbol's kind as the editor names it (Function, Class…). */
  kind?: string | null;
  /** What the symbol is inside of, when the editor says. */
  container?: string | null;
  /** Nesting depth in a document's symbol outline (0: top level). */
  depth?: number;
}

/**
 * One question for the editor's language features: an operation, a document and an LSP position (0-based
 * line, UTF-16 character), or a workspace symbol query, or a rename's new name.
 */
export interface IntelQueryParams {
  operation: "definition" | "references" | "implementations" | "hover" | "document_symbols" | "workspace_symbols" | "incoming_calls" | "outgoing_calls" | "rename";
  /** The document asked about (all but workspace_symbols). */
  path: string | null;
  line: number | null;
  character: number | null;
  /** workspace_symbols: the text to search symbol names for. */
  query: string | null;
  /** rename: the new name. */
  newName: string | null;
}

/**
 * A session's servers after one of them changed while the session runs (its tools changed, it crashed or
 * was restarted): what `toolgate/mcp/servers` would answer now.
 */
export interface McpChangedParams {
  servers: McpServerInfo[];
  problems: string[];
  workspaceTrusted: boolean;
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
}

export interface McpLogParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  name: string;
  maxBytes?: number;
}

export interface McpLogResult {
  path: string;
  text: string;
  truncated: boolean;
}

export interface McpServerInfo {
  name: string;
  scope: "user" | "workspace";
  source: string;
  transport: "stdio" | "http" | "sse";
  command: string;
  state: "blocked-untrusted" | "needs-approval" | "stopped" | "starting" | "running" | "changed" | "crashed" | "failed";
  reason: string;
  approved: boolean;
  pinned: boolean;
  changed: boolean;
  changedTools: string[];
  diff: string;
  tools: McpToolInfo[];
  log: string | null;
}

export interface McpServerRef {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  name: string;
}

export interface McpServerResult {
  server: McpServerInfo;
  approvedDiff: string;
}

export interface McpServersParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
}

export interface McpServersResult {
  servers: McpServerInfo[];
  problems: string[];
  workspaceTrusted: boolean;
}

export interface McpToolInfo {
  name: string;
  originalName: string;
  description: string;
  readOnlyHint: boolean | null;
  readOnly: boolean;
}

/** A whole message joined the conversation (the assistant's reply, or the tool results sent back). */
export interface MessageAdded {
  type: "message";
  message: ChatMessage;
}

export interface ModelsListParams {
  /** The models the person's settings name (toolgate.models), offered first. */
  configured?: string[];
}

export interface ModelsListResult {
  /** The model chats use now. */
  current: string;
  /** The current model, the settings' models, then the provider's list. */
  models: string[];
  /** Why the provider's API did not list its models. */
  problem: string | null;
}

export interface ModelsSelectParams {
  /** A model name, as its API spells it. */
  model: string;
}

export interface ModelsSelectResult {
  /** The model chats use from their next message on. */
  model: string;
  /** What the person should know (shown in the chat). */
  message: string;
}

/** A call waiting for approval, as the approval request named it. */
export interface PendingCall {
  tool: string;
  input?: Record<string, unknown>;
}

export interface PermissionCheckParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  tool: string;
  input?: Record<string, unknown>;
  /** Decide as if this allow rule were in force too, without saving it: whether an edited 'always allow' rule would cover the waiting call, asked before the rule is saved. */
  withAllow?: string | null;
}

/** The same answer as `toolgate permissions check`: nothing is run. */
export interface PermissionCheckResult {
  decision: "allow" | "ask" | "deny";
  readOnly: boolean;
  reason: string;
  rule: string | null;
}

export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions";

/** What one permission mode means (core's ModeTraits, camelCase on the wire). */
export interface PermissionModeTraits {
  mode: PermissionMode;
  /** The mode's name as a person reads it. */
  label: string;
  /** What the mode does, in one line. */
  summary: string;
  /** Nobody approves each call: allow rules that let any code run are not honoured, and repeated automatic denials hand the decision back to the person. */
  automatic: boolean;
  /** It lets through calls that default mode asks about, so an untrusted workspace may not choose it. */
  widening: boolean;
  /** Every call that passes the safety checks runs without asking. */
  allowsEveryCall: boolean;
  /** File changes inside the working directories (and commands that only make them) run unasked. */
  allowsFileEdits: boolean;
  /** Planning: only read-only calls run without asking; allow rules count only for read-only calls, the sandbox does not allow on its own, and WebFetch fetches only from hosts an allow rule names. */
  readOnly: boolean;
  /** An approval may offer to answer by switching to acceptEdits. */
  offersAcceptEdits: boolean;
  /** A project's checked-in settings may make it the default mode. */
  sharedDefault: boolean;
}

export interface ProblemsFileRequest {
  /** Absolute path of the file. */
  path: string;
  /** Wait until the editor's text of the file has this SHA-256 (hex, of its UTF-8 bytes) before waiting for the problems to settle. None: the file as the editor has it now. */
  contentSha256: string | null;
}

/** Which model the chat talks to. The key is kept in memory only (the sidecar never writes it to disk). */
export interface ProviderConfigureParams {
  provider?: "anthropic" | "openai";
  /** None: the provider's default model. */
  model?: string | null;
  /** None: the SDK's default (its *_BASE_URL variable). */
  baseUrl?: string | null;
  /** None: the SDK reads ANTHROPIC_API_KEY / OPENAI_API_KEY. */
  apiKey?: string | null;
  /** None: the provider's default. */
  maxTokens?: number | null;
  /** The model's context window in tokens, for a model the catalogue does not know or to compact earlier (compaction starts at a share of it). None: the catalogue's window for the model. */
  contextWindow?: number | null;
}

export interface ProviderStatus {
  provider: "anthropic" | "openai";
  model: string;
  baseUrl: string | null;
  /** A key was handed over, or the SDK's environment variable is set. */
  hasKey: boolean;
  /** What a person should know: ready, or what to configure. */
  message: string;
}

/** A model request is being sent (request number `request` of this `send`). */
export interface RequestStarted {
  type: "request_started";
  request: number;
}

/**
 * A transient API failure; the request is sent again after `delay_seconds`.
 *
 * `discard_partial`: text already streamed for this reply is void (the reply starts over).
 */
export interface Retrying {
  type: "retrying";
  attempt: number;
  max_attempts: number;
  delay_seconds: number;
  kind: "rate_limit" | "overloaded" | "server" | "connection" | "auth" | "context_too_long" | "bad_request" | "not_found" | "config";
  message: string;
  discard_partial: boolean;
}

/** A comment the person left on a line of a proposal (1-based), sent to the model with the decision. */
export interface ReviewNote {
  path: string;
  line: number;
  text: string;
}

export interface ReviewRecord {
  tool_use_id: string;
  tool_name: string;
  reason: string;
  answered_by: "user" | "non_interactive" | "unavailable" | "withdrawn";
  feedback: string | null;
  accepted_edits: boolean;
  kind: "review";
  title: string;
  files: ReviewedPath[];
  decision: "accept" | "reject";
  edited: string[];
  skipped: string[];
}

export interface ReviewedFile {
  path: string;
  content: string | null;
  /** The person left this file as it is (a new file is not created); content is then ignored. */
  skipped?: boolean;
}

export interface ReviewedPath {
  path: string;
  change: "create" | "modify" | "delete";
}

export interface RuleChangeParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** e.g. Bash(git log:*), Edit(src/**), Read(./.env), WebFetch */
  rule: string;
  behavior?: "allow" | "ask" | "deny";
  scope?: "session" | "local" | "project" | "user";
  /** For an 'always allow' answer: the waiting call the rule was written for. */
  call?: PendingCall | null;
}

export interface RuleChangeResult {
  /** False when the rule was already there (add) or not there (remove). */
  changed: boolean;
  file: string | null;
  warnings: string[];
  /** With `call`: whether the rules in force now allow that call (an edit may not). */
  coversCall: boolean | null;
  settings: Settings;
}

export interface RuleEntry {
  rule: string;
  behavior: "allow" | "ask" | "deny";
  /** Where it comes from: session, cli, local, project, user or flag (--settings). */
  source: string;
  /** The settings file that holds it (none for session rules). */
  file: string | null;
  /** Where the rule sits in `file`, 1-based. */
  line: number | null;
  column: number | null;
  /** Set for rules that let the model run any code. */
  warning: string | null;
}

/** A rule the UI can offer as "always allow", and the scope it would be saved in. */
export interface RuleSuggestion {
  rule: string;
  scope: "session" | "local" | "project" | "user";
}

/** What the chat panel's header shows: whether Bash commands run sandboxed in this session, and why not. */
export interface SandboxStatus {
  /** on: commands run sandboxed; off: turned off in the settings; unavailable: asked for but cannot run here (the detail says why and what to do). */
  state: "on" | "off" | "unavailable";
  /** Commands that only write or run code inside the workspace run unasked. */
  autoAllow: boolean;
  /** Which sandbox runs them, or why none does. */
  detail: string;
  /** The Network(domain:…) rules its proxy allows. */
  network: string[];
}

/** The "always allow" rule a person saved while the call waited (settings/addRule naming the call). */
export interface SavedRule {
  rule: string;
  scope: "session" | "local" | "project" | "user";
  covers_call: boolean | null;
}

export interface SessionExportParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  format: "markdown" | "json";
}

export interface SessionExportResult {
  /** The whole document, to be saved where the person chooses. */
  content: string;
  /** A file name to suggest, from the title (no directory). */
  fileName: string;
}

export interface SessionInfo {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  workspace: string;
  mode: PermissionMode;
  reviewEdits: "when_asking" | "always" | "after";
  title: string;
  createdAt: string;
  updatedAt: string;
  /** True when the session is open in this sidecar process. */
  live: boolean;
  /** How many prompts the person sent in it (its transcript's count). */
  turns: number;
}

export interface SessionListResult {
  /** Most recently updated first. */
  sessions: SessionInfo[];
}

export interface SessionMatch {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** The title holds the query. */
  inTitle: boolean;
  /** Where a prompt or an answer holds it, a little of the text around it. */
  snippet: string | null;
}

export interface SessionNewParams {
  /** Absolute path of the workspace; default: the first workspace folder. */
  workspace?: string | null;
  mode?: PermissionMode;
  reviewEdits?: "when_asking" | "always" | "after";
  title?: string;
}

export interface SessionRef {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
}

export interface SessionRenameParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  /** The title the person chose. */
  title: string;
}

export interface SessionRenameResult {
  /** The title as stored (runs of white space made one space). */
  title: string;
}

export interface SessionSearchParams {
  /** Matched without regard to case. */
  query: string;
}

export interface SessionSearchResult {
  /** Sessions whose title or conversation holds the query. */
  matches: SessionMatch[];
}

export interface SetModeParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  mode: PermissionMode;
  /** The waiting call (approval or diff review) the mode was changed to answer. */
  toolUseId?: string | null;
}

export interface SetReviewEditsParams {
  /** A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters. */
  sessionId: string;
  reviewEdits: "when_asking" | "always" | "after";
}

export interface Settings {
  sessionId: string;
  mode: PermissionMode;
  /** when_asking: a diff is reviewed only when the edit needs approval; always: every edit; after: an edit that asks only because it changes files in the working directories applies at once and is reviewed after (the changes bar's Keep / Undo); other asks are still reviewed first. */
  reviewEdits: "when_asking" | "always" | "after";
  /** Every rule in force: deny, then ask, then allow. */
  rules: RuleEntry[];
  /** Scope (local, project, user) → the settings file it is kept in. */
  settingsFiles: Record<string, string>;
  /** The files given with --settings, read too. */
  flagFiles: string[];
  /** Broken settings files, invalid rules and hook matchers: not in force. */
  problems: SettingsProblem[];
  /** The session's Bash sandbox. */
  sandbox: SandboxStatus | null;
}

/** A settings file, rule or hook matcher that is not in force, and where it is. */
export interface SettingsProblem {
  /** The settings file it is about (none: the command line). */
  file: string | null;
  /** 1-based; none: the file as a whole. */
  line: number | null;
  column: number | null;
  /** The rule that could not be used, when it is one. */
  rule: string | null;
  /** The problem in words, as the command line prints it. */
  message: string;
}

export interface SkippedFile {
  path: string;
  reason: "too_large" | "unreadable" | "not_a_file" | "vanished";
  size: number | null;
}

export interface Span {
  startLine: number;
  startCharacter: number;
  endLine: number;
  endCharacter: number;
}

/** The sandbox's stand-ins that exist now, in every session of this sidecar. */
export interface StandInsParams {
  /** Absolute paths of the empty read-only directories the sandbox made in the workspace as mount points for absent protected names (`.vscode`, `.envrc`, `AGENTS.md`, ...) while commands run; the editor marks them in the Explorer. */
  paths: string[];
}

/** One call a child made, as its line in the Agent card. */
export interface SubagentCall {
  id: string;
  name: string;
  summary: string;
  /** The result's first line; None: no result came. */
  result_summary: string | null;
  is_error: boolean;
  /** The call's own child, when it is an Agent call. */
  subagent: SubagentRun | null;
}

/**
 * An event of a child agent (the Agent tool), as the child emitted it. `task_id` is the parent's Agent
 * tool_use id, so a child's calls can be drawn inside that call's card; a grandchild's events arrive wrapped
 * twice.
 */
export interface SubagentEvent {
  type: "subagent";
  task_id: string;
  agent_type: string;
  event: Record<string, unknown>;
}

/**
 * The child agent a request comes from (the Agent tool): the editor names it on the card and marks the waiting
 * call in that Agent call's card. camelCase on the wire like the request around it (wire models dump by alias).
 */
export interface SubagentRef {
  /** The parent's Agent tool_use id: the call whose child asks. */
  taskId: string;
  agentType: string;
  /** The Agent call's short description of the task. */
  description: string;
}

/** One child agent's run, from its first request to its answer. */
export interface SubagentRun {
  /** The parent's Agent tool_use id. */
  task_id: string;
  agent_type: string;
  description: string;
  calls: SubagentCall[];
  /** None: the child never ended its turn. */
  stop_reason: "end_turn" | "max_tokens" | "max_turns" | "interrupted" | "error" | "prompt_blocked" | null;
  /** The child's last reply: what its parent was given. */
  answer: string;
}

export interface TextBlock {
  type: "text";
  text: string;
}

export interface TextDelta {
  type: "text_delta";
  text: string;
}

export interface TextEditModel {
  span: Span;
  newText: string;
}

export interface TodoItem {
  /** A short stable id for the item (keep it when the item changes). */
  id: string;
  /** What has to be done, as an imperative sentence. */
  content: string;
  /** pending, in_progress (at most one item at a time) or completed. */
  status: "pending" | "in_progress" | "completed";
}

export interface TodoUpdate {
  type: "todo_update";
  todos: TodoItem[];
}

export interface ToolCallFinished {
  type: "tool_call_finished";
  tool_use_id: string;
  name: string;
  is_error: boolean;
  summary: string;
  result: ToolResult;
}

export interface ToolCallProgress {
  type: "tool_call_progress";
  tool_use_id: string;
  kind: string;
  text: string;
}

export interface ToolCallStarted {
  type: "tool_call_started";
  tool_use_id: string;
  name: string;
  input: unknown;
  summary: string;
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
export interface ToolUseInput {
  type?: "tool_use";
  id: string;
  name: string;
  input?: unknown;
}

/** One tool call as the model wrote it. `input` stays untyped here: the runner validates it per tool. */
export interface ToolUseOutput {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
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
  calls: ToolUseInput[];
}

export interface ToolsRunResult {
  /** Exactly one tool_result per call, in the calls' order. */
  results: ToolResult[];
}

export interface TurnEnd {
  type: "turn_end";
  stop_reason: "end_turn" | "max_tokens" | "max_turns" | "interrupted" | "error" | "prompt_blocked";
  requests: number;
  usage: Usage;
}

/**
 * One turn: `start` is its turn checkpoint (Restore… on its prompt), `start` → `end` its diff, `changed`
 * the files it changed (Bash's too). `prompt`: which user message of the chat history it belongs to (0 = the
 * first prompt, counting user messages that carry text); None when that point was cut away since.
 */
export interface TurnInfo {
  turn: number;
  start: string;
  end: string;
  prompt: number | null;
  changed: string[];
}

/**
 * A file whose agent change the person has since edited on the same lines (or replaced, or removed):
 * an undo leaves it as it is.
 */
export interface UndoConflict {
  path: string;
  reason: string;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * After each model request: what it used, how full the context window was, and what it cost (None: the
 * model's price is unknown), with the session's totals (this process's requests, summaries included).
 */
export interface UsageReport {
  type: "usage";
  usage: Usage;
  context_tokens: number;
  context_estimated: boolean;
  context_window: number;
  cost_usd: number | null;
  total_usage: Usage;
  total_cost_usd: number | null;
}

/** Every permission mode and what it means, in the order a person is offered them. */
export const PERMISSION_MODE_TRAITS: readonly PermissionModeTraits[] = [
  {
    "mode": "default",
    "label": "Ask before changes",
    "summary": "Asks before anything that is not allowed.",
    "automatic": false,
    "widening": false,
    "allowsEveryCall": false,
    "allowsFileEdits": false,
    "readOnly": false,
    "offersAcceptEdits": true,
    "sharedDefault": true
  },
  {
    "mode": "acceptEdits",
    "label": "Accept edits",
    "summary": "File changes inside the working directories run without asking.",
    "automatic": true,
    "widening": true,
    "allowsEveryCall": false,
    "allowsFileEdits": true,
    "readOnly": false,
    "offersAcceptEdits": false,
    "sharedDefault": true
  },
  {
    "mode": "plan",
    "label": "Plan (read-only)",
    "summary": "Only reads run without asking: explore and plan.",
    "automatic": false,
    "widening": false,
    "allowsEveryCall": false,
    "allowsFileEdits": false,
    "readOnly": true,
    "offersAcceptEdits": false,
    "sharedDefault": true
  },
  {
    "mode": "bypassPermissions",
    "label": "Bypass permissions",
    "summary": "Everything that passes the safety checks runs without asking.",
    "automatic": true,
    "widening": true,
    "allowsEveryCall": true,
    "allowsFileEdits": false,
    "readOnly": false,
    "offersAcceptEdits": false,
    "sharedDefault": false
  }
];

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
  settingsAddRule: "toolgate/settings/addRule",
  settingsRemoveRule: "toolgate/settings/removeRule",
  permissionsCheck: "toolgate/permissions/check",
  providerConfigure: "toolgate/provider/configure",
  providerStatus: "toolgate/provider/status",
  chatSend: "toolgate/chat/send",
  chatInterrupt: "toolgate/chat/interrupt",
  chatHistory: "toolgate/chat/history",
  chatCompact: "toolgate/chat/compact",
  chatEvent: "toolgate/chat/event",
  approvalRequest: "toolgate/approval/request",
  diffReview: "toolgate/diff/review",
  checkpointsList: "toolgate/checkpoints/list",
  checkpointsDiff: "toolgate/checkpoints/diff",
  checkpointsFile: "toolgate/checkpoints/file",
  checkpointsRestore: "toolgate/checkpoints/restore",
  mcpServers: "toolgate/mcp/servers",
  mcpApprove: "toolgate/mcp/approve",
  mcpRevoke: "toolgate/mcp/revoke",
  mcpRestart: "toolgate/mcp/restart",
  mcpLog: "toolgate/mcp/log",
  mcpChanged: "toolgate/mcp/changed",
  sandboxStandIns: "toolgate/sandbox/standIns",
  hooksList: "toolgate/hooks/list",
  hooksTrust: "toolgate/hooks/trust",
  sessionRename: "toolgate/session/rename",
  sessionSearch: "toolgate/session/search",
  sessionExport: "toolgate/session/export",
  editorProblems: "toolgate/editor/problems",
  modelsList: "toolgate/models/list",
  modelsSelect: "toolgate/models/select",
  editorIntel: "toolgate/editor/intel",
  editorIntelLanguages: "toolgate/editor/intelLanguages",
  changesList: "toolgate/changes/list",
  changesKeep: "toolgate/changes/keep",
  changesUndo: "toolgate/changes/undo",
  changesWithout: "toolgate/changes/without",
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
  /** Add a permission rule. */
  "toolgate/settings/addRule": { params: RuleChangeParams; result: RuleChangeResult };
  /** Remove a permission rule. */
  "toolgate/settings/removeRule": { params: RuleChangeParams; result: RuleChangeResult };
  /** What the permission engine would decide for a call (runs nothing). */
  "toolgate/permissions/check": { params: PermissionCheckParams; result: PermissionCheckResult };
  /** Choose the model for chats. */
  "toolgate/provider/configure": { params: ProviderConfigureParams; result: ProviderStatus };
  /** Which model chats use, and whether it is ready. */
  "toolgate/provider/status": { params: Empty; result: ProviderStatus };
  /** Answer a user message (tools included). */
  "toolgate/chat/send": { params: ChatSendParams; result: ChatSendResult };
  /** Stop the message being answered. */
  "toolgate/chat/interrupt": { params: SessionRef; result: ChatInterruptResult };
  /** A session's conversation so far. */
  "toolgate/chat/history": { params: SessionRef; result: ChatHistoryResult };
  /** Summarise the older turns now. */
  "toolgate/chat/compact": { params: ChatCompactParams; result: ChatCompactResult };
  /** A session's checkpoints. */
  "toolgate/checkpoints/list": { params: SessionRef; result: CheckpointsListResult };
  /** A restore's diff. */
  "toolgate/checkpoints/diff": { params: CheckpointsDiffParams; result: CheckpointsDiffResult };
  /** A file at a checkpoint. */
  "toolgate/checkpoints/file": { params: CheckpointFileParams; result: CheckpointFileResult };
  /** Restore a checkpoint's files (a redo checkpoint is taken first). */
  "toolgate/checkpoints/restore": { params: CheckpointsRestoreParams; result: CheckpointsRestoreResult };
  /** A session's MCP servers and tools. */
  "toolgate/mcp/servers": { params: McpServersParams; result: McpServersResult };
  /** Approve an MCP server's settings (and changed tools), then start it in the session. */
  "toolgate/mcp/approve": { params: McpServerRef; result: McpServerResult };
  /** Withdraw an approval and stop the server. */
  "toolgate/mcp/revoke": { params: McpServerRef; result: McpServerResult };
  /** Start an MCP server again (reads its settings). */
  "toolgate/mcp/restart": { params: McpServerRef; result: McpServerResult };
  /** The end of an MCP server's stderr log. */
  "toolgate/mcp/log": { params: McpLogParams; result: McpLogResult };
  /** A session's hooks and their trust. */
  "toolgate/hooks/list": { params: HooksListParams; result: HooksListResult };
  /** Trust workspace hooks the person reviewed (recorded in the user settings); the hooks after it. */
  "toolgate/hooks/trust": { params: HooksTrustParams; result: HooksListResult };
  /** Give a session a title. */
  "toolgate/session/rename": { params: SessionRenameParams; result: SessionRenameResult };
  /** The stored sessions whose title or prompts and answers hold some text. */
  "toolgate/session/search": { params: SessionSearchParams; result: SessionSearchResult };
  /** A stored session as a readable Markdown document or as JSON. */
  "toolgate/session/export": { params: SessionExportParams; result: SessionExportResult };
  /** The models the picker offers. */
  "toolgate/models/list": { params: ModelsListParams; result: ModelsListResult };
  /** Switch every chat to a model from its next message on, until the model settings change. */
  "toolgate/models/select": { params: ModelsSelectParams; result: ModelsSelectResult };
  /** The agent's changes, per file. */
  "toolgate/changes/list": { params: ChangesListParams; result: ChangesListResult };
  /** Accept a file or a hunk. */
  "toolgate/changes/keep": { params: ChangesKeepParams; result: ChangesListResult };
  /** Undo the agent's change to a hunk, a file or every file (a redo checkpoint is taken first). */
  "toolgate/changes/undo": { params: ChangesUndoParams; result: ChangesUndoResult };
  /** A file without the changes. */
  "toolgate/changes/without": { params: ChangesWithoutParams; result: ChangesWithoutResult };
}

/** Requests the sidecar sends; the extension answers. */
export interface ServerRequests {
  /** Ask the user to allow a call. */
  "toolgate/approval/request": { params: ApprovalParams; result: ApprovalResult };
  /** Show a proposed change for review. */
  "toolgate/diff/review": { params: DiffReviewParams; result: DiffReviewResult };
  /** The problems the editor's language servers report for files (after they settle), or for the workspace. */
  "toolgate/editor/problems": { params: EditorProblemsParams; result: EditorProblemsResult };
  /** Ask the editor's language features. */
  "toolgate/editor/intel": { params: IntelQueryParams; result: IntelAnswerResult };
  /** Which languages the editor's language features cover (asked once, when the first session opens). */
  "toolgate/editor/intelLanguages": { params: IntelLanguagesParams; result: IntelLanguagesResult };
}

/** Notifications the sidecar sends. */
export interface ServerNotifications {
  /** Live output from a running call. */
  "toolgate/tools/progress": ToolProgress;
  /** What a chat is doing, as it happens. */
  "toolgate/chat/event": ChatEventParams;
  /** A session's MCP servers changed (tools, state) while it runs; sent to the client that asked about them. */
  "toolgate/mcp/changed": McpChangedParams;
  /** The sandbox's stand-in directories changed (made before a command, removed after): all that exist now. */
  "toolgate/sandbox/standIns": StandInsParams;
}
