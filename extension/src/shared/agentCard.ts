/**
 * The Agent card's model: what one Agent call's child agent did, built from the child's own events (the sidecar wraps
 * each in a `subagent` event whose task id is the Agent call's tool_use id; a grandchild's arrive wrapped twice) and
 * from the approvals it asks for, or, in a reopened session, from the sidecar's record of the run (`restoredRun`).
 * The chat model keeps it on the Agent call's tool item; webview/agentCard.ts draws it. Pure: no DOM, no `vscode`.
 */

import type { ChatEvent, SubagentCall, SubagentRef, SubagentRun } from '../protocol';
import type { Item, ToolStatus } from './chatTypes';
import { resultText } from './history';

type ToolItem = Extract<Item, { kind: 'tool' }>;

/** The names the Agent tool answers to (its alias is what older prompts call it). */
const AGENT_TOOL_NAMES = new Set(['Agent', 'Task']);

export type AgentStatus = 'running' | 'done' | 'stopped';

/** One call the child made, as its line in the card. */
export interface ChildCall {
  id: string;
  toolName: string;
  summary: string;
  status: ToolStatus;
  resultSummary: string;
  /** It waits for the person's answer on an approval card. */
  waiting: boolean;
  /** The approval card it waits on (its item id), for the line's link to it. */
  approvalId?: string;
  /** An Agent call of the child's: its own child (a grandchild), drawn inside this line. */
  agent?: AgentRun;
}

export interface AgentRun {
  agentType: string;
  description: string;
  calls: ChildCall[];
  /** What the child's latest reply said so far (streamed); once it is done, its final answer. */
  text: string;
  status: AgentStatus;
  /** Why the child stopped, in words ('' while it runs, and when it answered). */
  stopReason: string;
}

const STOP_REASONS: Record<string, string> = {
  interrupted: 'interrupted',
  max_turns: 'stopped at its request limit',
  max_tokens: 'cut off at the token limit',
  error: 'stopped on an error from the model API',
};

/** How a person is told which child is meant: "explore: find the tests". */
/** How a child's question is attributed, after what it asks (the approval card's title, the notification). */
export const ASKED_BY_SUBAGENT = ' — asked by the subagent ';

export function subagentName(child: Pick<SubagentRef, 'agentType' | 'description'>): string {
  return child.description ? `${child.agentType}: ${child.description}` : child.agentType;
}

/** The run an Agent call starts with (null for any other tool). Its type and description come from the call's input. */
export function agentRunFor(toolName: string, input: unknown): AgentRun | null {
  if (!AGENT_TOOL_NAMES.has(toolName)) return null;
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const text = (key: string): string => (typeof fields[key] === 'string' ? fields[key] : '');
  return { agentType: text('subagent_type') || 'agent', description: text('description'), calls: [], text: '', status: 'running', stopReason: '' };
}

/** One of the child's events applied to its run. Events the card does not show leave it as it is. */
export function applyChildEvent(run: AgentRun, event: ChatEvent): AgentRun {
  switch (event.type) {
    case 'request_started':
      return { ...run, text: '' }; // a new reply: the card shows the child's latest words
    case 'text_delta':
      return { ...run, text: run.text + event.text };
    case 'retrying':
      return event.discard_partial ? { ...run, text: '' } : run;
    case 'tool_call_started': {
      const agent = agentRunFor(event.name, event.input);
      const call: ChildCall = { id: event.tool_use_id, toolName: event.name, summary: event.summary, status: 'running', resultSummary: '', waiting: false };
      return { ...run, calls: [...run.calls, agent ? { ...call, agent } : call] };
    }
    case 'tool_call_finished':
      return updateCall(run, event.tool_use_id, (call) => ({
        ...call,
        status: event.is_error ? 'error' : 'done',
        resultSummary: event.summary,
        waiting: false,
        ...(call.agent ? { agent: finishRun(call.agent, event.is_error, resultText(event.result)) } : {}),
      }));
    case 'subagent': {
      // A grandchild's event (the child's own Agent call): drawn inside that call's line.
      const inner = childEvent(event.event);
      if (!inner) return run;
      return updateCall(run, event.task_id, (call) => (call.agent ? { ...call, agent: applyChildEvent(call.agent, inner) } : call));
    }
    case 'turn_end':
      return event.stop_reason === 'end_turn'
        ? { ...run, status: 'done', stopReason: '' }
        : { ...run, status: 'stopped', stopReason: STOP_REASONS[event.stop_reason] ?? `stopped (${event.stop_reason})` };
    default:
      return run;
  }
}

/** A `subagent` event's payload, as the child emitted it; null when it is not an event (nothing to show). */
export function childEvent(payload: Record<string, unknown>): ChatEvent | null {
  return typeof payload.type === 'string' ? (payload as unknown as ChatEvent) : null;
}

/**
 * The call `toolUseId` of task `taskId` (the Agent card's own child, task `ownTaskId`, or a grandchild inside it)
 * starts waiting for the person on the approval card `approvalId`; `approvalId` null: it stops (the card was answered).
 */
export function markWaiting(run: AgentRun, ownTaskId: string, taskId: string, toolUseId: string, approvalId: string | null): AgentRun {
  return updateTask(run, ownTaskId, taskId, (owner) =>
    updateCall(owner, toolUseId, (call) => {
      const { approvalId: _answered, ...rest } = call;
      return approvalId === null ? { ...rest, waiting: false } : { ...call, waiting: true, approvalId };
    }),
  );
}

/** Whether `run` (of task `ownTaskId`) is the run of task `taskId` or holds it (a grandchild's, inside a call). */
export function holdsTask(run: AgentRun, ownTaskId: string, taskId: string): boolean {
  return ownTaskId === taskId || run.calls.some((call) => call.agent !== undefined && holdsTask(call.agent, call.id, taskId));
}

function updateTask(run: AgentRun, ownTaskId: string, taskId: string, update: (run: AgentRun) => AgentRun): AgentRun {
  if (ownTaskId === taskId) return update(run);
  if (!holdsTask(run, ownTaskId, taskId)) return run;
  return { ...run, calls: run.calls.map((call) => (call.agent ? { ...call, agent: updateTask(call.agent, call.id, taskId, update) } : call)) };
}

/**
 * A run as a stored session recorded it (`toolgate/chat/history`'s `subagents`): what its card showed when the child
 * ended, or what it did so far while it runs (the sidecar sends a run that never ended and no longer runs as
 * interrupted). A run whose end was not recorded stays running, and takes its Agent call's outcome (`finishRun`).
 */
export function restoredRun(record: SubagentRun): AgentRun {
  const status: AgentStatus = record.stop_reason === null ? 'running' : record.stop_reason === 'end_turn' ? 'done' : 'stopped';
  const stopReason = status === 'stopped' && record.stop_reason ? (STOP_REASONS[record.stop_reason] ?? `stopped (${record.stop_reason})`) : '';
  const calls = record.calls.map((call) => restoredCall(call, status !== 'running'));
  return { agentType: record.agent_type, description: record.description, calls, text: record.answer, status, stopReason };
}

function restoredCall(call: SubagentCall, runEnded: boolean): ChildCall {
  const restored: ChildCall = {
    id: call.id,
    toolName: call.name,
    summary: call.summary,
    // No result recorded: it runs while its run does; a run that ended (interrupted, say) left it without one, and
    // a grandchild's stopped run keeps its calls as they are when its Agent card ends (`endedCall`), so say it here.
    status: call.result_summary === null ? (runEnded ? 'error' : 'running') : call.is_error ? 'error' : 'done',
    resultSummary: call.result_summary ?? '',
    waiting: false,
  };
  return call.subagent ? { ...restored, agent: restoredRun(call.subagent) } : restored;
}

/**
 * The Agent call ended, as its tool_call_finished says: a run that never heard its child's end (a session saved by an
 * older sidecar, or a child that failed) takes the call's own outcome, and the call's result is the child's answer.
 */
export function finishRun(run: AgentRun, isError: boolean, result: string): AgentRun {
  if (run.status !== 'running') return run.text.trim() ? run : { ...run, text: result };
  return { ...run, status: isError ? 'stopped' : 'done', text: run.text.trim() ? run.text : result };
}

export interface AgentCardView {
  status: AgentStatus;
  /** "explore: find the tests", the card's line. */
  title: string;
  /** "running", "done", "stopped: interrupted" */
  statusLabel: string;
  calls: ChildCall[];
  /** The answer (or the latest words) shown under the calls; '' when there is none yet. */
  text: string;
}

/**
 * What the card shows. The Agent call's own state wins over the child's when the turn ended without the child's
 * end being heard (the sidecar stopped, the turn was aborted): nothing runs any more, so nothing is shown running.
 */
export function agentCardView(tool: Pick<ToolItem, 'status' | 'resultSummary'>, run: AgentRun): AgentCardView {
  const ended = tool.status !== 'running';
  const status: AgentStatus = run.status === 'running' && ended ? (tool.status === 'done' ? 'done' : 'stopped') : run.status;
  const reason = run.stopReason || (status === 'stopped' && run.status === 'running' ? tool.resultSummary : '');
  const calls = ended ? run.calls.map(endedCall) : run.calls;
  return {
    status,
    title: subagentName(run),
    statusLabel: status === 'stopped' && reason ? `stopped: ${reason}` : status,
    calls,
    text: run.text.trim(),
  };
}

/** A call of a run that ended: nothing in it runs or waits any more. */
function endedCall(call: ChildCall): ChildCall {
  const agent = call.agent && call.agent.status === 'running' ? { ...call.agent, status: 'stopped' as const, calls: call.agent.calls.map(endedCall) } : call.agent;
  const ended = call.status === 'running' ? { ...call, status: 'error' as const, waiting: false } : call;
  return agent ? { ...ended, agent } : ended;
}

function updateCall(run: AgentRun, id: string, update: (call: ChildCall) => ChildCall): AgentRun {
  const index = run.calls.findIndex((call) => call.id === id);
  if (index < 0) return run;
  const calls = run.calls.slice();
  calls[index] = update(calls[index] as ChildCall);
  return { ...run, calls };
}
