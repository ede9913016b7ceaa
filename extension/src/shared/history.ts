/**
 * A stored session as the actions its live turns dispatched: `itemsFromHistory` (chatModel.ts) feeds them to the same
 * `reduce`, so a reopened session's cards, outcomes and summaries are drawn exactly as they were live. Pure.
 */

import type {
  ApprovalRecord,
  CallSummary,
  ChatEvent,
  ChatMessage,
  CompactionMark,
  ReviewRecord,
  SubagentRef,
  SubagentRun,
  ToolResult,
} from '../protocol';
import type { ChatAction, ChatState } from './chatModel';
import {
  ACCEPTED_EDITS,
  ACCEPT_EDITS_ON,
  ALLOWED,
  UNANSWERED,
  WITHDRAWN,
  acceptedOutcome,
  alwaysAllowedOutcome,
  deniedOutcome,
  displayPath,
  rejectedOutcome,
} from './outcomes';

/** What a stored session adds to its messages: the answers people gave, each card's summaries, its compactions. */
export interface HistoryRecords {
  decisions: readonly (ApprovalRecord | ReviewRecord)[];
  calls: Readonly<Record<string, CallSummary>>;
  compactions: readonly CompactionMark[];
  /** By Agent call id: what its child did (older sidecars send none: the card shows the call's result). */
  subagents: Readonly<Record<string, SubagentRun>>;
}

/** The actions, and how many of the first ones draw messages the model now sees only through a summary. */
export interface HistoryActions {
  actions: ChatAction[];
  summarisedActions: number;
}

/** How the sidecar begins an attachment's block (server/toolgate/sidecar/attachments.py). */
export const ATTACHED_PREFIX = 'The person attached ';

export function historyActions(
  state: ChatState,
  messages: readonly ChatMessage[],
  records: HistoryRecords,
  busy = false,
): HistoryActions {
  const workspace = state.sessions.find((session) => session.sessionId === state.sessionId)?.workspace;
  const actions: ChatAction[] = [];
  const event = (e: ChatEvent): void => void actions.push({ type: 'event', event: e, at: 0 });
  const answered = new Set<string>();
  let decisionNumber = 0;
  const summarisedMessages = Math.max(0, ...records.compactions.map((mark) => mark.summarised_messages));
  let summarisedActions = 0;
  for (const [index, message] of messages.entries()) {
    if (index === summarisedMessages) summarisedActions = actions.length;
    for (const mark of records.compactions) if (mark.after_messages === index) actions.push(compactionNotice(mark));
    const blocks = message.content;
    if (message.role === 'assistant') {
      // Live, a reply streams its text first, and its calls' cards start once the whole reply is in.
      for (const block of blocks) {
        if (block.type === 'text' && block.text.trim() !== '') event({ type: 'text_delta', text: block.text });
      }
      actions.push({ type: 'busy', busy: false }); // the reply is complete: what follows is a new item
    }
    const uses = new Set<string>();
    for (const [index, block] of blocks.entries()) {
      // What the person attached follows their prompt in blocks of its own: the prompt is what the transcript shows.
      if (block.type === 'text' && index > 0 && message.role === 'user' && block.text.startsWith(ATTACHED_PREFIX)) continue;
      if (block.type === 'text' && block.text.trim() !== '' && message.role === 'user') {
        actions.push({ type: 'userMessage', text: block.text });
      } else if (block.type === 'tool_use') {
        uses.add(block.id);
        const summary = records.calls[block.id]?.summary ?? summarizeInput(block.input);
        event({ type: 'tool_call_started', tool_use_id: block.id, name: block.name, input: block.input, summary });
        const child = records.subagents[block.id];
        if (child) {
          actions.push({ type: 'subagentRestored', run: child });
          // The approvals the child (or a grandchild) asked for, named by it: drawn under its Agent card, as live.
          const askers = childCalls(child);
          for (const decision of records.decisions) {
            const asker = askers.get(decision.tool_use_id);
            if (asker) actions.push(...decisionActions(decision, `h${++decisionNumber}`, workspace, asker));
          }
        }
      } else if (block.type === 'tool_result') {
        answered.add(block.tool_use_id);
        const text = resultText(block);
        const summary = records.calls[block.tool_use_id]?.result_summary ?? firstLine(text);
        event({
          type: 'tool_call_finished',
          tool_use_id: block.tool_use_id,
          name: '',
          is_error: block.is_error,
          summary,
          result: block,
        });
      }
    }
    // Live, the cards of a reply's calls come first, then each approval or review as it is asked.
    for (const decision of records.decisions) {
      if (uses.has(decision.tool_use_id)) actions.push(...decisionActions(decision, `h${++decisionNumber}`, workspace));
    }
  }
  if (summarisedMessages >= messages.length) summarisedActions = actions.length;
  for (const mark of records.compactions) if (mark.after_messages >= messages.length) actions.push(compactionNotice(mark));
  // A turn that is running now is running its last reply's calls: those are in flight, not lost (their live end
  // arrives as events).
  const lastReply = busy ? messages.map((message) => message.role).lastIndexOf('assistant') : -1;
  const lost = unansweredCalls(lastReply < 0 ? messages : messages.slice(0, lastReply), answered);
  return { actions: [...actions, ...lost], summarisedActions };
}

/** Where the model's view of the conversation was replaced by a summary: said, with the summary to unfold. */
function compactionNotice(mark: CompactionMark): ChatAction {
  const how = { auto: 'near the context window', overflow: 'after the model refused a long request', manual: 'on request' }[
    mark.trigger
  ];
  const text =
    `The conversation was compacted ${how}: the model goes on from a summary of the ${mark.summarised_messages} ` +
    'messages above (kept here, marked as summarised).';
  return { type: 'notice', level: 'info', text, summary: mark.summary };
}

/** By call id, the child (or grandchild) that made each call of a recorded run. */
function childCalls(run: SubagentRun, calls = new Map<string, SubagentRef>()): Map<string, SubagentRef> {
  for (const call of run.calls) {
    calls.set(call.id, { taskId: run.task_id, agentType: run.agent_type, description: run.description });
    if (call.subagent) childCalls(call.subagent, calls);
  }
  return calls;
}

function decisionActions(
  decision: ApprovalRecord | ReviewRecord,
  id: string,
  workspace: string | undefined,
  subagent?: SubagentRef,
): ChatAction[] {
  const unanswered = decision.answered_by === 'withdrawn' ? WITHDRAWN : UNANSWERED;
  const byPerson = decision.answered_by === 'user';
  if (decision.kind === 'approval') {
    const state = !byPerson ? 'cancelled' : decision.decision === 'allow' ? 'allowed' : 'denied';
    const outcome = !byPerson
      ? unanswered
      : decision.decision === 'deny'
        ? deniedOutcome(decision.feedback ?? '')
        : decision.saved_rule
          ? alwaysAllowedOutcome(decision.saved_rule.rule, decision.saved_rule.scope, decision.saved_rule.covers_call)
          : decision.accepted_edits
            ? ACCEPTED_EDITS
            : ALLOWED;
    return [
      {
        type: 'approvalRequested',
        id,
        // What the record keeps of the card; the suggested rules were the waiting request's alone.
        card: {
          toolUseId: decision.tool_use_id,
          toolName: decision.tool_name,
          summary: decision.summary,
          reason: decision.reason,
          ...(subagent ? { subagent } : {}),
        },
      },
      { type: 'approvalResolved', id, state, outcome },
    ];
  }
  const state = !byPerson ? 'cancelled' : decision.decision === 'accept' ? 'accepted' : 'rejected';
  const skipped = decision.files.filter((file) => decision.skipped.includes(file.path));
  const accepted = acceptedOutcome(decision.edited, skipped);
  const outcome = !byPerson
    ? unanswered
    : decision.decision === 'accept'
      ? decision.accepted_edits
        ? `${accepted} ${ACCEPT_EDITS_ON}`
        : accepted
      : rejectedOutcome(decision.feedback ?? '');
  return [
    {
      type: 'reviewRequested',
      id,
      toolUseId: decision.tool_use_id,
      title: decision.title,
      reason: decision.reason,
      files: decision.files.map((file) => ({ ...file, label: displayPath(file.path, workspace) })),
    },
    { type: 'reviewResolved', id, state, outcome, ...(state === 'accepted' && skipped.length > 0 ? { leftOut: decision.skipped } : {}) },
  ];
}

/** A call whose result was never recorded (a crash mid-call, a turn stopped mid-call) ends as such. */
function unansweredCalls(messages: readonly ChatMessage[], answered: ReadonlySet<string>): ChatAction[] {
  const actions: ChatAction[] = [];
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type !== 'tool_use' || answered.has(block.id)) continue;
      const result: ToolResult = { type: 'tool_result', tool_use_id: block.id, content: '', is_error: true };
      actions.push({
        type: 'event',
        at: 0,
        event: {
          type: 'tool_call_finished',
          tool_use_id: block.id,
          name: block.name,
          is_error: true,
          summary: NO_RESULT,
          result,
        },
      });
    }
  }
  return actions;
}

const NO_RESULT = 'No result was recorded for this call.';

/** A one-line description of a tool call's input, for a card drawn from history (the live summary is not saved). */
export function summarizeInput(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const record = input as Record<string, unknown>;
  for (const key of ['command', 'file_path', 'path', 'pattern', 'url', 'description']) {
    const value = record[key];
    if (typeof value === 'string' && value) return firstLine(value);
  }
  return firstLine(JSON.stringify(input));
}

function firstLine(text: string, max = 160): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A tool_result's text for its card; images are named, not drawn, and the model's error markup is left out. */
export function resultText(result: ToolResult | undefined): string {
  if (!result) return '';
  const text =
    typeof result.content === 'string'
      ? result.content
      : result.content.map((block) => (block.type === 'text' ? block.text : `[image ${block.source.media_type}]`)).join('\n');
  return withoutErrorMarkup(text);
}

/**
 * The sidecar wraps an error for the model in `<tool_error kind="…">` … `</tool_error>` lines (core/errors.py); people
 * read the message inside, and the card's colour already says it failed.
 */
export function withoutErrorMarkup(text: string): string {
  return text.replace(/^<tool_error kind="[^"]*">\n?/gm, '').replace(/\n?^<\/tool_error>$/gm, '');
}
