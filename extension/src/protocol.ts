/**
 * The sidecar's JSON-RPC protocol, as the extension uses it.
 *
 * Every type comes from `protocol.generated.ts`, which `make protocol` writes from the pydantic models in
 * server/toolgate/sidecar/protocol.py (a Python test fails when it is stale). This module only gives a few of them
 * the names the extension's code reads best with, and adds the lists and mappings the UI needs.
 */

import type * as generated from './protocol.generated';

export { Methods } from './protocol.generated';
import { PERMISSION_MODE_TRAITS as MODE_TRAITS } from './protocol.generated';
export type {
  Attachment,
  ModelsListResult,
  ModelsSelectResult,
  ApprovalRecord,
  CallSummary,
  ChangedFileInfo,
  ChangesListResult,
  ChangesUndoResult,
  HunkInfo,
  ChatCompactResult,
  ChatEventParams,
  ChatHistoryResult,
  ChatInterruptResult,
  ChatMessage,
  ChatSendResult,
  CompactionMark,
  CheckpointFileResult,
  CheckpointsDiffResult,
  CheckpointsListResult,
  CheckpointsRestoreResult,
  FileChange,
  FileProposal,
  InitializationOptions,
  McpChangedParams,
  McpLogResult,
  McpServerInfo,
  McpServerResult,
  McpServersResult,
  McpToolInfo,
  PendingCall,
  PermissionCheckResult,
  PermissionMode,
  ProviderConfigureParams,
  ProviderStatus as SidecarProviderStatus,
  ReviewedFile,
  ReviewRecord,
  RuleChangeResult,
  RuleEntry,
  SandboxStatus,
  UsageReport,
  SessionInfo,
  SessionExportResult,
  SessionListResult,
  SessionMatch,
  SessionRenameResult,
  SessionSearchResult,
  Settings,
  SettingsProblem as SidecarSettingsProblem,
  StandInsParams,
  SubagentCall,
  SubagentRef,
  SubagentRun,
  TodoItem,
  ToolResult,
  TurnInfo,
} from './protocol.generated';

export type ApprovalRequestParams = generated.ApprovalParams;
export type ApprovalAnswer = generated.ApprovalResult;
export type DiffReviewParams = generated.DiffReviewParams;
export type DiffReviewAnswer = generated.DiffReviewResult;
export type RuleSuggestion = generated.RuleSuggestion;
export type RuleScope = RuleSuggestion['scope'];
export type RuleBehavior = generated.RuleEntry['behavior'];
export type ReviewEdits = generated.Settings['reviewEdits'];
export type ToolProgressParams = generated.ToolProgress;
export type ChatEvent = generated.ChatEventParams['event'];
export type StopReason = generated.ChatSendResult['stopReason'];

/** Every permission mode with its traits and label, generated from the sidecar's one table (core/permission.py). */
export const PERMISSION_MODE_TRAITS = MODE_TRAITS;
export const PERMISSION_MODES: readonly generated.PermissionMode[] = PERMISSION_MODE_TRAITS.map((t) => t.mode);
/** The modes that let every call through without asking: choosing one is confirmed first. */
export function allowsEveryCall(mode: generated.PermissionMode): boolean {
  return PERMISSION_MODE_TRAITS.some((t) => t.mode === mode && t.allowsEveryCall);
}
export const RULE_SCOPES: readonly RuleScope[] = ['session', 'local', 'project', 'user'];
/** In the order the permission engine consults them. */
export const RULE_BEHAVIORS: readonly RuleBehavior[] = ['deny', 'ask', 'allow'];

/** The `toolgate.diffReview` setting's values, as the sidecar names them (a session's `reviewEdits`). */
export type DiffReviewPolicy = 'always' | 'whenAsking' | 'after';
export function reviewEditsFor(policy: DiffReviewPolicy): ReviewEdits {
  return policy === 'always' ? 'always' : policy === 'after' ? 'after' : 'when_asking';
}
