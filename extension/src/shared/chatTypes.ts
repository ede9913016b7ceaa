/**
 * The chat's state and the actions that change it: the types `reduce` (chatModel.ts) works on, shared by the
 * extension host and the webview. Types only.
 */

import type {
  ApprovalRecord,
  ApprovalRequestParams,
  CallSummary,
  ChatEvent,
  ChatMessage,
  CompactionMark,
  PermissionMode,
  RuleScope,
  ReviewRecord,
  SandboxStatus,
  UsageReport,
  SessionInfo,
  SessionMatch,
  SubagentRun,
  TodoItem,
  TurnInfo,
} from '../protocol';
import type { AgentRun } from './agentCard';
import type { RestoreRedo, TurnMark } from './checkpointView';
import type { HistoryRecords } from './history';
import type { ChangesBar, ChangesBarAction } from './changesBar';
import type { McpCard, McpCardAction } from './mcpCard';

export type SidecarAction = 'restartSidecar' | 'showLog' | 'openPythonSetting' | 'installToolgate' | 'selectPython';

export type SidecarStatus =
  | { state: 'stopped' }
  | { state: 'starting'; detail: string }
  | { state: 'ready'; detail: string }
  | { state: 'restarting'; detail: string; attempt: number; maxAttempts: number }
  | { state: 'unavailable'; detail: string; fix: string; actions: SidecarAction[] };

export interface ProviderStatus {
  provider: string;
  model: string;
  baseUrl: string;
  hasApiKey: boolean;
  /** The sidecar's own sentence about it ("Ready: …", or what to configure); empty until it has said one. */
  message: string;
}

/** A broken settings file or an unusable rule, as `toolgate/settings/get` reports it, and the file to fix. */
export interface SettingsProblem {
  text: string;
  /** The settings file it is about, when the sidecar's words name one. */
  file: string | null;
  /** 1-based, when the sidecar names the place. */
  line: number | null;
  column: number | null;
}

/** The approval card's fields that a stored decision (ApprovalRecord) keeps: a card drawn from history has these. */
type RecordedCardField = 'toolUseId' | 'toolName' | 'summary' | 'reason';
type ApprovalRequestCard = Omit<ApprovalRequestParams, 'sessionId' | 'input'>;

/**
 * The approval card, defined once: what the sidecar's `toolgate/approval/request` says, less what only the answer
 * needs (the session, the call's raw input). The live request (review/approvals.ts), the chat item and its action,
 * and a card replayed from history all carry this one type, so a field added to the request reaches the card's
 * renderer (webview/components.ts) without being restated. A replayed card has only the recorded fields; the rest
 * (suggested rules, "accept edits") belong to a waiting request and are optional.
 */
export type ApprovalCard = Pick<ApprovalRequestCard, RecordedCardField> & Partial<Omit<ApprovalRequestCard, RecordedCardField>>;

export type ToolStatus = 'running' | 'done' | 'error';
export type ApprovalState = 'pending' | 'allowed' | 'denied' | 'cancelled';
export type ReviewState = 'pending' | 'accepted' | 'rejected' | 'cancelled';

export interface ReviewFileView {
  path: string;
  /** The path as shown: relative to the workspace when inside it. */
  label: string;
  change: 'create' | 'modify' | 'delete';
  /** Accepted with this file left as it is (a new file not created, a deletion not made). */
  leftOut?: boolean;
}

export type Item =
  /** `queued`: typed while the sidecar was not ready; sent as soon as it is. `turn`: its checkpoints, once known. */
  | { kind: 'user'; id: string; text: string; queued: boolean; turn?: TurnMark }
  | { kind: 'assistant'; id: string; text: string; streaming: boolean }
  | {
      kind: 'tool';
      id: string;
      toolName: string;
      summary: string;
      /** The call's input as the model sent it: what the card's readable view of a change is drawn from. */
      input?: unknown;
      status: ToolStatus;
      startedAt: number;
      finishedAt: number | null;
      /** Time spent waiting for the person (an approval, a review), not running: shown apart from the run time. */
      waitedMs: number;
      /** Since when it waits for the person; null when it does not. */
      waitingSince: number | null;
      output: string;
      outputTrimmed: boolean;
      resultSummary: string;
      result: string;
      /** An Agent call's child agent: its calls, words and status, drawn inside the call's card (agentCard.ts). */
      agent?: AgentRun;
    }
  | {
      kind: 'approval';
      id: string;
      card: ApprovalCard;
      state: ApprovalState;
      outcome: string;
      /**
       * The "always allow" rule and scope last tried, and why the sidecar refused it ('' when it did not); with no
       * draft, the error is the mode switch's ("Allow, and accept edits").
       */
      draft: { rule: string; scope: RuleScope } | null;
      error: string;
    }
  | {
      kind: 'review';
      id: string;
      toolUseId: string;
      title: string;
      reason: string;
      files: ReviewFileView[];
      /** acceptEdits mode would allow the changes: the card offers "Accept, and accept edits". */
      offersAcceptEdits: boolean;
      state: ReviewState;
      outcome: string;
      /** Why the last answer did not go through (the mode switch was refused); '' when nothing went wrong. */
      error: string;
    }
  /**
   * `retry`: says the model API is being asked again; it goes once the answer comes after all. `action`: the fix
   * the notice offers as a button (an API key the provider refused). `redo`: what undoes a restore.
   */
  | { kind: 'notice'; id: string; level: 'info' | 'warning' | 'error'; text: string; retry?: boolean; action?: NoticeAction; redo?: RestoreRedo; summary?: string };

export type NoticeAction = 'setApiKey';

export interface ChatState {
  sessionId: string | null;
  sessions: SessionInfo[];
  /** Whether the sidecar offers sessions at all (false until it answers `toolgate/session/list`). */
  sessionsAvailable: boolean;
  mode: PermissionMode;
  busy: boolean;
  /** A request is with the model and nothing of its answer has come yet. */
  thinking: boolean;
  items: Item[];
  todos: TodoItem[];
  sidecar: SidecarStatus;
  provider: ProviderStatus;
  /** What the open session's permission settings could not use (empty when all is well). */
  settingsProblems: SettingsProblem[];
  /** The open session's Bash sandbox, as the sidecar reports it (null: no session yet, or it does not say). */
  sandbox: SandboxStatus | null;
  /** The open session's last `usage` event: context used / window and cost (null: no request reported yet). */
  usage: UsageReport | null;
  /** The open session's MCP servers that wait for the person's approval, as cards (shared/mcpCard.ts). */
  mcpCards: McpCard[];
  /** How many of the first items the model sees only through a summary (a compaction): drawn as summarised. */
  summarised: number;
  /** The history list's search (`toolgate/session/search`): null while nothing is searched for. */
  sessionSearch: SessionSearch | null;
  /** The agent's changes of the last turns, above the composer (shared/changesBar.ts). */
  changes: ChangesBar;
  nextId: number;
}

/** Which sessions hold the text searched for in the history list. */
export interface SessionSearch {
  query: string;
  matches: SessionMatch[];
}

export type ChatAction =
  | { type: 'snapshot'; state: ChatState }
  | { type: 'sidecar'; status: SidecarStatus }
  | { type: 'provider'; provider: ProviderStatus }
  | { type: 'sessions'; sessions: SessionInfo[]; available: boolean }
  | {
      type: 'sessionOpened';
      sessionId: string;
      mode: PermissionMode;
      /** The conversation so far (`toolgate/chat/history`), drawn as it would have been live. */
      messages: ChatMessage[];
      todos: TodoItem[];
      busy: boolean;
      /** How its approvals and reviews were answered, and its cards' summaries (absent from older sidecars). */
      decisions?: (ApprovalRecord | ReviewRecord)[];
      calls?: Record<string, CallSummary>;
      /** Where the conversation was summarised (absent from older sidecars: nothing is marked). */
      compactions?: CompactionMark[];
      /** By Agent call id: what its child did, to draw its card again (absent from older sidecars). */
      subagents?: Record<string, SubagentRun>;
    }
  /** A stored session's Agent card gets what its child did (`toolgate/chat/history`'s record of it). */
  | { type: 'subagentRestored'; run: SubagentRun }
  | { type: 'sessionClosed' }
  | { type: 'sessionSearch'; search: SessionSearch | null }
  | { type: 'mode'; mode: PermissionMode }
  | { type: 'busy'; busy: boolean }
  | { type: 'userMessage'; text: string; queued?: boolean }
  /** The messages that waited for the sidecar have been handed to it. */
  | { type: 'queueSent' }
  /**
   * The turn ended without the sidecar saying so (it crashed or was stopped): every card still open ends, with why.
   * Running tools become interrupted, pending approvals and reviews cancelled.
   */
  | { type: 'turnAborted'; reason: string; at: number }
  | { type: 'event'; event: ChatEvent; at: number }
  | { type: 'toolProgress'; toolUseId: string; text: string }
  | {
      type: 'approvalRequested';
      id: string;
      card: ApprovalCard;
      /** When it started waiting (Date.now()); absent in a replayed history, where no waiting is counted. */
      at?: number;
    }
  | { type: 'approvalResolved'; id: string; state: Exclude<ApprovalState, 'pending'>; outcome: string; at?: number }
  /** The sidecar refused the rule of an "always allow" (or the mode switch: no rule); the card stays open with why. */
  | { type: 'approvalFailed'; id: string; rule?: string; scope?: RuleScope; error: string }
  | { type: 'settingsProblems'; problems: SettingsProblem[] }
  | { type: 'sandbox'; sandbox: SandboxStatus | null }
  | {
      type: 'reviewRequested';
      id: string;
      toolUseId: string;
      title: string;
      reason: string;
      files: ReviewFileView[];
      offersAcceptEdits?: boolean;
      at?: number;
    }
  | { type: 'reviewFailed'; id: string; error: string }
  /** `leftOut`: the paths of files the person left as they are while accepting the rest. */
  | { type: 'reviewResolved'; id: string; state: Exclude<ReviewState, 'pending'>; outcome: string; leftOut?: string[]; at?: number }
  /** The open session's turns and their checkpoints (`toolgate/checkpoints/list`): Restore… and "files changed". */
  | { type: 'checkpoints'; turns: TurnInfo[] }
  /** `summary`: a compaction's summary, folded under the notice. */
  | { type: 'notice'; level: 'info' | 'warning' | 'error'; text: string; redo?: RestoreRedo; summary?: string }
  | McpCardAction
  | ChangesBarAction;
