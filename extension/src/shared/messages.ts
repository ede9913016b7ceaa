/**
 * The messages between the extension host and the chat webview (postMessage in both directions).
 * The host validates everything it receives with `parseViewMessage`: a webview is a web page, and the host does
 * not trust its input's shape.
 */

import type { PermissionMode, RuleScope } from '../protocol';
import { PERMISSION_MODES, RULE_SCOPES } from '../protocol';
import type { ChangesOp } from './changesBar';
import { CHANGES_OPS } from './changesBar';
import type { ChatAction, SidecarAction } from './chatModel';
import type { Attachment, CompletionItem } from './composer';
import { parseAttachments } from './composerMessages';

/** An attachment with the text of its chip in the composer. */
export interface AttachmentChip {
  attachment: Attachment;
  chip: string;
}

/** Host → webview. */
export type HostMessage =
  | { type: 'action'; action: ChatAction }
  | FocusMessage
  /** The `@` candidates for the composer's request `requestId` (an older request's answer is dropped). */
  | { type: 'completions'; requestId: number; items: CompletionItem[] }
  /** Add a chip to the composer ("Add selection to chat", the active file). */
  | { type: 'attach'; chip: AttachmentChip }
  /** The model picker's choices. */
  | { type: 'models'; current: string; models: string[]; problem: string | null };

/** Where the keyboard goes in the chat view: the composer (Open Chat), the first waiting card (Alt+Shift+P), or the
 * changes bar (Ctrl+Alt+C). */
export type FocusMessage = { type: 'focusComposer' } | { type: 'focusPendingCard' } | { type: 'focusChangesBar' };

/** How a person answered an approval card. */
export type ApprovalChoice =
  | { kind: 'once' }
  | { kind: 'always'; rule: string; scope: RuleScope }
  /** Allow, and switch the session to acceptEdits mode (offered when that mode would allow the call). */
  | { kind: 'acceptEdits' }
  | { kind: 'deny'; feedback: string };

/** Webview → host. */
export type ViewMessage =
  | { type: 'ready' }
  | { type: 'send'; text: string; attachments?: Attachment[] }
  /** The composer wants `@` candidates for `query`. */
  | { type: 'complete'; requestId: number; query: string }
  | { type: 'attachActiveFile' }
  | { type: 'listModels' }
  | { type: 'selectModel'; model: string }
  | { type: 'interrupt' }
  | { type: 'newSession' }
  | { type: 'openSession'; sessionId: string }
  | { type: 'deleteSession'; sessionId: string }
  /** The history list: a title the person chose, a search of titles and conversations ('' ends it), an export. */
  | { type: 'renameSession'; sessionId: string; title: string }
  | { type: 'searchSessions'; query: string }
  | { type: 'exportSession'; sessionId: string; format: ExportFormat }
  | { type: 'setMode'; mode: PermissionMode }
  | { type: 'approval'; id: string; choice: ApprovalChoice }
  /** `acceptEdits`: accept, and switch the session to acceptEdits mode (offered when that mode would allow it). */
  | { type: 'review'; id: string; decision: 'accept' | 'acceptEdits' | 'reject'; feedback: string }
  | { type: 'showReview'; id: string; path: string | null }
  | { type: 'sidecarAction'; action: SidecarAction }
  | { type: 'setApiKey' }
  | { type: 'openProviderSettings' }
  | { type: 'openPermissionRules' }
  /** A code block's Copy button. */
  | { type: 'copy'; text: string }
  /** Open the file of the chat state's `settingsProblems[index]` (an index, so the view names no path itself). */
  | { type: 'openSettingsProblem'; index: number }
  /** A prompt's Restore… and "N files changed", a restore notice's Redo (by the item's id: the host knows the rest). */
  | { type: 'restoreCheckpoint' | 'showTurnChanges' | 'redoRestore'; itemId: string }
  /** An MCP approval card's Approve, Not now (folds it) and reopen (unfolds it), by the server's name. */
  | { type: 'mcpCard'; name: string; choice: McpCardChoice }
  /** A changes bar button: a file by `path` and the `version` it was drawn at, a hunk by its index in that file. */
  | { type: 'changes'; op: ChangesOp; path?: string; version?: string; hunk?: number };

export type ExportFormat = 'markdown' | 'json';
const EXPORT_FORMATS: readonly ExportFormat[] = ['markdown', 'json'];

export type McpCardChoice = 'approve' | 'notNow' | 'reopen';
const MCP_CARD_CHOICES: readonly McpCardChoice[] = ['approve', 'notNow', 'reopen'];

const SIDECAR_ACTIONS: readonly SidecarAction[] = [
  'restartSidecar',
  'showLog',
  'openPythonSetting',
  'installToolgate',
  'selectPython',
];

/** A bound on any text a webview can send: a prompt, a rule, feedback. */
export const MAX_TEXT = 200_000;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_TEXT ? value : undefined;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

function parseChoice(value: unknown): ApprovalChoice | undefined {
  if (!isObject(value)) return undefined;
  switch (value.kind) {
    case 'once':
      return { kind: 'once' };
    case 'acceptEdits':
      return { kind: 'acceptEdits' };
    case 'always': {
      const rule = text(value.rule)?.trim();
      const scope = oneOf(value.scope, RULE_SCOPES);
      return rule && scope ? { kind: 'always', rule, scope } : undefined;
    }
    case 'deny': {
      const feedback = text(value.feedback ?? '');
      return feedback === undefined ? undefined : { kind: 'deny', feedback };
    }
    default:
      return undefined;
  }
}

/** The message, if it is one the host understands; undefined otherwise (the caller logs and drops it). */
export function parseViewMessage(raw: unknown): ViewMessage | undefined {
  if (!isObject(raw)) return undefined;
  switch (raw.type) {
    case 'ready':
    case 'interrupt':
    case 'newSession':
    case 'setApiKey':
    case 'openProviderSettings':
    case 'openPermissionRules':
    case 'attachActiveFile':
    case 'listModels':
      return { type: raw.type };
    case 'complete': {
      const query = text(raw.query);
      const requestId = raw.requestId;
      return query !== undefined && typeof requestId === 'number' && Number.isInteger(requestId)
        ? { type: 'complete', requestId, query }
        : undefined;
    }
    case 'selectModel': {
      const model = text(raw.model)?.trim();
      return model && /^\S+$/.test(model) ? { type: 'selectModel', model } : undefined;
    }
    case 'openSettingsProblem': {
      const index = raw.index;
      return typeof index === 'number' && Number.isInteger(index) && index >= 0
        ? { type: 'openSettingsProblem', index }
        : undefined;
    }
    case 'restoreCheckpoint':
    case 'showTurnChanges':
    case 'redoRestore': {
      const itemId = text(raw.itemId);
      return itemId ? { type: raw.type, itemId } : undefined;
    }
    case 'mcpCard': {
      const name = text(raw.name);
      const choice = oneOf(raw.choice, MCP_CARD_CHOICES);
      return name && choice ? { type: 'mcpCard', name, choice } : undefined;
    }
    case 'changes': {
      const op = oneOf(raw.op, CHANGES_OPS);
      const path = raw.path === undefined ? undefined : text(raw.path);
      const version = raw.version === undefined ? undefined : text(raw.version);
      const hunk = raw.hunk;
      const hunkOk = hunk === undefined || (typeof hunk === 'number' && Number.isInteger(hunk) && hunk >= 0);
      if (!op || (raw.path !== undefined && !path) || (raw.version !== undefined && !version) || !hunkOk) return undefined;
      return {
        type: 'changes',
        op,
        ...(path ? { path } : {}),
        ...(version ? { version } : {}),
        ...(typeof hunk === 'number' ? { hunk } : {}),
      };
    }
    case 'copy': {
      const value = text(raw.text);
      return value ? { type: 'copy', text: value } : undefined;
    }
    case 'send': {
      const value = text(raw.text);
      const attachments = parseAttachments(raw.attachments ?? []);
      if (value === undefined || value.trim() === '' || !attachments) return undefined;
      return attachments.length > 0 ? { type: 'send', text: value, attachments } : { type: 'send', text: value };
    }
    case 'openSession':
    case 'deleteSession': {
      const sessionId = text(raw.sessionId);
      return sessionId ? { type: raw.type, sessionId } : undefined;
    }
    case 'renameSession': {
      const sessionId = text(raw.sessionId);
      const title = text(raw.title)?.trim();
      return sessionId && title ? { type: 'renameSession', sessionId, title } : undefined;
    }
    case 'searchSessions': {
      const query = text(raw.query);
      return query === undefined ? undefined : { type: 'searchSessions', query };
    }
    case 'exportSession': {
      const sessionId = text(raw.sessionId);
      const format = oneOf(raw.format, EXPORT_FORMATS);
      return sessionId && format ? { type: 'exportSession', sessionId, format } : undefined;
    }
    case 'setMode': {
      const mode = oneOf(raw.mode, PERMISSION_MODES);
      return mode ? { type: 'setMode', mode } : undefined;
    }
    case 'approval': {
      const id = text(raw.id);
      const choice = parseChoice(raw.choice);
      return id && choice ? { type: 'approval', id, choice } : undefined;
    }
    case 'review': {
      const id = text(raw.id);
      const decision = oneOf(raw.decision, ['accept', 'acceptEdits', 'reject'] as const);
      const feedback = text(raw.feedback ?? '');
      return id && decision && feedback !== undefined ? { type: 'review', id, decision, feedback } : undefined;
    }
    case 'showReview': {
      const id = text(raw.id);
      const path = raw.path === null ? null : text(raw.path);
      return id && path !== undefined ? { type: 'showReview', id, path } : undefined;
    }
    case 'sidecarAction': {
      const action = oneOf(raw.action, SIDECAR_ACTIONS);
      return action ? { type: 'sidecarAction', action } : undefined;
    }
    default:
      return undefined;
  }
}
