/**
 * The sidecar's JSON-RPC protocol, as the extension uses it.
 *
 * Everything the sidecar already serves comes from `protocol.generated.ts` (written by `make protocol` from the
 * pydantic models in server/toolgate/sidecar/protocol.py; a Python test fails when it is stale). This module only
 * renames a few of those types for readability and adds, BY HAND, the parts the sidecar does not serve yet:
 *
 * - the chat methods of issue 8 (`toolgate/chat/send`, `toolgate/chat/interrupt`, the `toolgate/chat/event`
 *   notification). Their events mirror server/toolgate/agent/events.py, which the sidecar forwards as they are
 *   (snake_case inside `event`). When the sidecar serves them, they belong in the generated file and these
 *   hand-written definitions go.
 * - the extra `initializationOptions` the extension sends (provider, model, …): the sidecar ignores unknown keys
 *   today and will read them once it runs the agent.
 */

import type * as generated from './protocol.generated';
import { Methods as GeneratedMethods } from './protocol.generated';

export type {
  FileProposal,
  PermissionMode,
  ReviewedFile,
  SessionInfo,
  SessionListResult,
  SessionNewParams,
  Settings,
  ToolResult,
} from './protocol.generated';

export type ApprovalRequestParams = generated.ApprovalParams;
export type ApprovalAnswer = generated.ApprovalResult;
export type DiffReviewParams = generated.DiffReviewParams;
export type DiffReviewAnswer = generated.DiffReviewResult;
export type RuleSuggestion = generated.RuleSuggestionOutput;
export type RuleScope = RuleSuggestion['scope'];
export type ReviewEdits = generated.Settings['reviewEdits'];
export type ToolProgressParams = generated.ToolProgress;

export const PERMISSION_MODES: readonly generated.PermissionMode[] = [
  'default',
  'acceptEdits',
  'plan',
  'bypassPermissions',
];
export const RULE_SCOPES: readonly RuleScope[] = ['session', 'local', 'project', 'user'];

export const Methods = {
  ...GeneratedMethods,
  // Hand-written until the sidecar serves the agent (issue 8).
  chatSend: 'toolgate/chat/send',
  chatInterrupt: 'toolgate/chat/interrupt',
  chatEvent: 'toolgate/chat/event',
} as const;

/** The `toolgate.diffReview` setting's values, as the sidecar names them (a session's `reviewEdits`). */
export type DiffReviewPolicy = 'always' | 'whenAsking';
export function reviewEditsFor(policy: DiffReviewPolicy): ReviewEdits {
  return policy === 'always' ? 'always' : 'when_asking';
}

// ---------------------------------------------------------------------------------------------------------------
// initializationOptions
// ---------------------------------------------------------------------------------------------------------------

export interface InitializationOptions extends generated.InitializationOptions {
  // Read by the sidecar once it runs the agent; ignored (as unknown keys) before that.
  provider: 'anthropic' | 'openai';
  /** Empty: the sidecar's default model for the provider. */
  model: string;
  /** Empty: the provider's public endpoint. */
  baseUrl: string;
  defaultMode: generated.PermissionMode;
  reviewEdits: ReviewEdits;
  maxToolConcurrency: number;
  client: { name: string; version: string; extensionVersion: string };
}

// ---------------------------------------------------------------------------------------------------------------
// Chat (issue 8) — hand-written, see the top of this file
// ---------------------------------------------------------------------------------------------------------------

export interface ChatSendParams {
  sessionId: string;
  text: string;
}

export type StopReason = 'end_turn' | 'max_tokens' | 'max_turns' | 'interrupted' | 'error';

export interface ChatSendResult {
  stopReason: StopReason;
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

/** server/toolgate/agent/events.py, one variant per event class. */
export type ChatEvent =
  | { type: 'request_started'; request: number }
  | { type: 'text_delta'; text: string }
  | { type: 'message'; message: unknown }
  | { type: 'tool_call_started'; tool_use_id: string; name: string; input: unknown; summary: string }
  | { type: 'tool_call_progress'; tool_use_id: string; kind: string; text: string }
  | {
      type: 'tool_call_finished';
      tool_use_id: string;
      name: string;
      is_error: boolean;
      summary: string;
      result: generated.ToolResult;
    }
  | { type: 'todo_update'; todos: TodoItem[] }
  | {
      type: 'retrying';
      attempt: number;
      max_attempts: number;
      delay_seconds: number;
      kind: string;
      message: string;
      discard_partial: boolean;
    }
  | { type: 'error'; kind: string; message: string }
  | { type: 'turn_end'; stop_reason: StopReason; requests: number; usage: Record<string, number> };

export interface ChatEventParams {
  sessionId: string;
  event: ChatEvent;
}
