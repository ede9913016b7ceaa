/**
 * What the chat view shows, and how it changes.
 *
 * The extension host owns the state and applies every change with `reduce`; it forwards each action to the webview,
 * which applies the same `reduce` to its copy and redraws. A webview that is created (or re-created after being
 * hidden) gets the whole state as a snapshot first. Pure: no DOM, no Node, no `vscode`.
 */

import type { ChatEvent, ChatMessage, PermissionMode } from '../protocol';
import { agentRunFor, applyChildEvent, childEvent, finishRun, holdsTask, markWaiting, restoredRun } from './agentCard';
import type { ApprovalCard, ChatAction, ChatState, Item, ProviderStatus } from './chatTypes';
import { EMPTY_BAR, isChangesBarAction, reduceChangesBar } from './changesBar';
import { markPrompts } from './checkpointView';
import type { HistoryRecords } from './history';
import { historyActions, resultText } from './history';
import { isMcpCardAction, reduceMcpCards, withoutApprovedCards } from './mcpCard';
import { appendOutput } from './toolView';

export { resultText, summarizeInput } from './history';
export { formatDuration, TOOL_OUTPUT_CAP } from './toolView';
export type { HistoryRecords } from './history';
export type * from './chatTypes';

export function initialState(provider: ProviderStatus, mode: PermissionMode): ChatState {
  return {
    sessionId: null,
    sessions: [],
    sessionsAvailable: false,
    mode,
    busy: false,
    thinking: false,
    items: [],
    todos: [],
    sidecar: { state: 'stopped' },
    provider,
    settingsProblems: [],
    sandbox: null,
    usage: null,
    mcpCards: [],
    summarised: 0,
    sessionSearch: null,
    changes: EMPTY_BAR,
    nextId: 1,
  };
}

export function reduce(state: ChatState, action: ChatAction): ChatState {
  if (isMcpCardAction(action)) return { ...state, mcpCards: reduceMcpCards(state.mcpCards, action) };
  if (isChangesBarAction(action)) return { ...state, changes: reduceChangesBar(state.changes, action) };
  switch (action.type) {
    case 'snapshot':
      return action.state;
    case 'sidecar':
      return { ...state, sidecar: action.status };
    case 'provider':
      return { ...state, provider: action.provider };
    case 'sessions':
      return { ...state, sessions: action.sessions, sessionsAvailable: action.available };
    case 'sessionOpened': {
      const opened: ChatState = {
        ...state,
        sessionId: action.sessionId,
        mode: action.mode,
        items: [],
        todos: [],
        mcpCards: [],
        usage: null,
        summarised: 0,
        changes: EMPTY_BAR,
      };
      const history = {
        decisions: action.decisions ?? [],
        calls: action.calls ?? {},
        compactions: action.compactions ?? [],
        subagents: action.subagents ?? {},
      };
      const drawn = itemsFromHistory(opened, action.messages, history, action.busy);
      return { ...drawn, todos: action.todos, busy: action.busy, thinking: false };
    }
    case 'sessionSearch':
      return { ...state, sessionSearch: action.search };
    case 'sessionClosed':
      // The transcript stays on screen; the next message starts a new session.
      return finishStreaming({ ...state, sessionId: null, busy: false, thinking: false });
    case 'mode':
      return { ...state, mode: action.mode };
    case 'busy':
      return action.busy ? { ...state, busy: true } : finishStreaming({ ...state, busy: false, thinking: false });
    case 'userMessage':
      return appendWithId({ ...finishStreaming(state), mcpCards: withoutApprovedCards(state.mcpCards) }, (id) => ({
        kind: 'user',
        id,
        text: action.text,
        queued: action.queued ?? false,
      }));
    case 'queueSent':
      return {
        ...state,
        items: state.items.map((item) => (item.kind === 'user' && item.queued ? { ...item, queued: false } : item)),
      };
    case 'turnAborted':
      return abortTurn(state, action.reason, action.at);
    case 'event': {
      const next = applyEvent(state, action.event, action.at);
      // Waiting for the model from the moment a request goes out until anything of the answer (or a failure) arrives.
      const thinking = action.event.type === 'request_started' || (state.thinking && isQuiet(action.event));
      return thinking === next.thinking ? next : { ...next, thinking };
    }
    case 'toolProgress':
      return updateItem(state, action.toolUseId, 'tool', (tool) => appendOutput(tool, action.text));
    case 'approvalRequested': {
      const waiting = startWaiting(childWaits(state, action.card, action.id, action.at), action.card.toolUseId, action.at);
      const card: Item = { kind: 'approval', id: action.id, card: action.card, state: 'pending', outcome: '', draft: null, error: '' };
      return action.card.subagent ? insertAfterAgentCard(waiting, action.card.subagent.taskId, card) : append(waiting, card);
    }
    case 'subagentRestored':
      return updateItem(state, action.run.task_id, 'tool', (tool) => (tool.agent ? { ...tool, agent: restoredRun(action.run) } : tool));
    case 'approvalResolved':
      return updateItem(stopWaiting(childWaits(state, approvalCard(state, action.id), null, action.at), cardToolUseId(state, action.id, 'approval'), action.at), action.id, 'approval', (card) =>
        card.state === 'pending' ? { ...card, state: action.state, outcome: action.outcome, error: '' } : card,
      );
    case 'approvalFailed':
      return updateItem(state, action.id, 'approval', (card) =>
        card.state === 'pending'
          ? {
              ...card,
              draft: action.rule !== undefined && action.scope !== undefined ? { rule: action.rule, scope: action.scope } : null,
              error: action.error,
            }
          : card,
      );
    case 'settingsProblems':
      return { ...state, settingsProblems: action.problems };
    case 'sandbox':
      return { ...state, sandbox: action.sandbox };
    case 'reviewRequested':
      return append(startWaiting(state, action.toolUseId, action.at), {
        kind: 'review',
        id: action.id,
        toolUseId: action.toolUseId,
        title: action.title,
        reason: action.reason,
        files: action.files,
        offersAcceptEdits: action.offersAcceptEdits ?? false,
        state: 'pending',
        outcome: '',
        error: '',
      });
    case 'reviewFailed':
      return updateItem(state, action.id, 'review', (card) => (card.state === 'pending' ? { ...card, error: action.error } : card));
    case 'reviewResolved':
      return updateItem(stopWaiting(state, cardToolUseId(state, action.id, 'review'), action.at), action.id, 'review', (card) =>
        card.state === 'pending'
          ? {
              ...card,
              state: action.state,
              outcome: action.outcome,
              error: '',
              files: card.files.map((file) => (action.leftOut?.includes(file.path) ? { ...file, leftOut: true } : file)),
            }
          : card,
      );
    case 'checkpoints':
      return { ...state, items: markPrompts(state.items, action.turns, isPrompt) };
    case 'notice':
      return appendWithId(state, (id) => ({
        kind: 'notice',
        id,
        level: action.level,
        text: action.text,
        ...(action.redo ? { redo: action.redo } : {}),
        ...(action.summary !== undefined ? { summary: action.summary } : {}),
      }));
  }
}

const isPrompt = (item: Item): item is Extract<Item, { kind: 'user' }> => item.kind === 'user' && !item.queued;

function applyEvent(state: ChatState, event: ChatEvent, at: number): ChatState {
  switch (event.type) {
    case 'text_delta': {
      state = withoutRetryNotices(state);
      const last = state.items[state.items.length - 1];
      if (last && last.kind === 'assistant' && last.streaming) {
        return { ...state, items: [...state.items.slice(0, -1), { ...last, text: last.text + event.text }] };
      }
      return appendWithId(state, (id) => ({ kind: 'assistant', id, text: event.text, streaming: true }));
    }
    case 'tool_call_started': {
      const agent = agentRunFor(event.name, event.input);
      return append(finishStreaming(withoutRetryNotices(state)), {
        kind: 'tool',
        id: event.tool_use_id,
        toolName: event.name,
        summary: event.summary,
        input: event.input,
        status: 'running',
        startedAt: at,
        finishedAt: null,
        waitedMs: 0,
        waitingSince: null,
        output: '',
        outputTrimmed: false,
        resultSummary: '',
        result: '',
        ...(agent ? { agent } : {}),
      });
    }
    case 'tool_call_progress':
      return updateItem(state, event.tool_use_id, 'tool', (tool) => appendOutput(tool, event.text));
    case 'tool_call_finished':
      return updateItem(stopWaiting(state, event.tool_use_id, at), event.tool_use_id, 'tool', (tool) => ({
        ...tool,
        status: event.is_error ? 'error' : 'done',
        finishedAt: at,
        resultSummary: event.summary,
        result: resultText(event.result),
        ...(tool.agent ? { agent: finishRun(tool.agent, event.is_error, resultText(event.result)) } : {}),
      }));
    case 'todo_update':
      return { ...state, todos: event.todos };
    case 'retrying': {
      // The reply starts over: what was streamed of it is void.
      const last = state.items[state.items.length - 1];
      const kept =
        event.discard_partial && last?.kind === 'assistant' && last.streaming
          ? { ...state, items: state.items.slice(0, -1) }
          : finishStreaming(state);
      const text =
        `The model API did not answer (${event.message}). ` +
        `Trying again in ${event.delay_seconds.toFixed(1)} s (attempt ${event.attempt} of ${event.max_attempts}).`;
      return appendWithId(kept, (id) => ({ kind: 'notice', id, level: 'warning', text, retry: true }));
    }
    case 'context_cleared':
      // The sidecar made room and sent the request again: worth knowing, nothing to do.
      return appendWithId(finishStreaming(state), (id) => ({ kind: 'notice', id, level: 'info', text: event.message }));
    case 'hook': {
      // A hook blocked the prompt, kept the model going, failed or left a notice: the message names the hook.
      const level = event.outcome === 'blocked' || event.outcome === 'problem' ? 'warning' : 'info';
      return appendWithId(finishStreaming(state), (id) => ({ kind: 'notice', id, level, text: event.message }));
    }
    case 'compacted': {
      // The older turns were summarised to fit the window; the summary is what the model goes on from. They are
      // marked at once, not only when the turn ends and the panel is drawn again from the history.
      const text =
        `The conversation was compacted: ${event.summarised} earlier messages summarised, ${event.kept} kept ` +
        `(about ${event.tokens_before} → ${event.tokens_after} tokens).`;
      const summarised = Math.max(state.summarised, itemsBeforeKept(state.items, event.kept_from_tool_use_id));
      return appendWithId(finishStreaming({ ...state, summarised }), (id) => ({
        kind: 'notice',
        id,
        level: 'info',
        text,
        summary: event.summary,
      }));
    }
    case 'compaction_failed':
      return appendWithId(finishStreaming(state), (id) => ({ kind: 'notice', id, level: 'warning', text: event.message }));
    case 'error':
      // The provider refused the key: the way to give it another one is on the notice.
      return appendWithId(finishStreaming(state), (id) => ({
        kind: 'notice',
        id,
        level: 'error',
        text: event.message,
        ...(event.kind === 'auth' ? { action: 'setApiKey' as const } : {}),
      }));
    case 'turn_end':
      return finishStreaming(state);
    case 'usage':
      return { ...state, usage: event };
    case 'request_started':
    case 'message':
      // Nothing to draw: the deltas and tool events show the same content as it arrives.
      return state;
    case 'subagent': {
      // A child agent's event: its task id is the Agent call's id, whose card shows it (agentCard.ts).
      const child = childEvent(event.event);
      if (!child) return state;
      return updateItem(state, event.task_id, 'tool', (tool) => (tool.agent ? { ...tool, agent: applyChildEvent(tool.agent, child) } : tool));
    }
  }
}

/**
 * A saved conversation drawn the way it was drawn live: it is replayed as the actions the live turn dispatched
 * (text, tool_call_started, the approval or review and its answer, tool_call_finished), through `reduce`. A call
 * without a recorded result is shown as such, unless `busy` says the session's turn is running it now. Tool results
 * travel in user messages.
 */
export function itemsFromHistory(
  state: ChatState,
  messages: readonly ChatMessage[],
  records: HistoryRecords = { decisions: [], calls: {}, compactions: [], subagents: {} },
  busy = false,
): ChatState {
  const { actions, summarisedActions } = historyActions(state, messages, records, busy);
  const summarised = actions.slice(0, summarisedActions).reduce(reduce, state);
  const drawn = actions.slice(summarisedActions).reduce(reduce, { ...summarised, summarised: summarised.items.length });
  return finishStreaming(drawn);
}

/**
 * How many of the first items a compaction summarised: those before the first reply it kept, which is drawn as its
 * text (when it had any) right before its first call's card. 0 when that call is not on screen, or the reply made
 * none (the history marks it when the turn ends).
 */
function itemsBeforeKept(items: readonly Item[], firstKeptCall: string | null): number {
  const call = firstKeptCall === null ? -1 : items.findIndex((item) => item.kind === 'tool' && item.id === firstKeptCall);
  if (call < 0) return 0;
  return items[call - 1]?.kind === 'assistant' ? call - 1 : call;
}

/** Every card that was still open ends: nothing will answer for it any more. */
function abortTurn(state: ChatState, reason: string, at: number): ChatState {
  const items = state.items.map((item): Item => {
    switch (item.kind) {
      case 'assistant':
        return item.streaming ? { ...item, streaming: false } : item;
      case 'tool':
        return item.status === 'running'
          ? { ...waited(item, at), status: 'error', finishedAt: at, resultSummary: `Interrupted: ${reason}` }
          : item;
      case 'approval':
        return item.state === 'pending' ? { ...item, state: 'cancelled', outcome: `Not answered: ${reason}` } : item;
      case 'review':
        return item.state === 'pending' ? { ...item, state: 'cancelled', outcome: `Withdrawn: ${reason}` } : item;
      default:
        return item;
    }
  });
  return { ...state, items, busy: false, thinking: false };
}

/** A tool call starts waiting for the person (its approval or review card opened). */
function startWaiting(state: ChatState, toolUseId: string, at: number | undefined): ChatState {
  if (at === undefined) return state;
  return updateItem(state, toolUseId, 'tool', (tool) => (tool.waitingSince === null ? { ...tool, waitingSince: at } : tool));
}

/** The person answered (or the call finished anyway): the wait is added to the call's waiting time. */
function stopWaiting(state: ChatState, toolUseId: string | undefined, at: number | undefined): ChatState {
  if (toolUseId === undefined || at === undefined) return state;
  return updateItem(state, toolUseId, 'tool', (tool) => (tool.waitingSince === null ? tool : waited(tool, at)));
}

function waited(tool: Extract<Item, { kind: 'tool' }>, at: number): Extract<Item, { kind: 'tool' }> {
  if (tool.waitingSince === null) return tool;
  return { ...tool, waitedMs: tool.waitedMs + Math.max(0, at - tool.waitingSince), waitingSince: null };
}

/**
 * A child agent's call starts waiting for the person on the approval card `approvalId` (null: stops, it was answered):
 * so does the Agent call whose card holds the child (a grandchild is inside its parent child's), and the card marks it.
 */
function childWaits(state: ChatState, card: ApprovalCard | undefined, approvalId: string | null, at: number | undefined): ChatState {
  const child = card?.subagent;
  const owner = child && agentCardOf(state, child.taskId);
  if (!card || !child || !owner) return state;
  const timed = approvalId !== null ? startWaiting(state, owner.id, at) : stopWaiting(state, owner.id, at);
  return updateItem(timed, owner.id, 'tool', (tool) =>
    tool.agent ? { ...tool, agent: markWaiting(tool.agent, tool.id, child.taskId, card.toolUseId, approvalId) } : tool,
  );
}

/** The transcript's Agent card that shows task `taskId`: its own child's, or a grandchild's inside it. */
function agentCardOf(state: ChatState, taskId: string): Extract<Item, { kind: 'tool' }> | undefined {
  return state.items.find(
    (item): item is Extract<Item, { kind: 'tool' }> => item.kind === 'tool' && item.agent !== undefined && holdsTask(item.agent, item.id, taskId),
  );
}

/**
 * A child's approval card goes right under the Agent card that shows the child (after the cards already joined to
 * it), so the two read as one, even when other cards came after the Agent card. A sibling, not nested: the Agent card
 * is redrawn with each of the child's events, which would lose what the person types on the approval card.
 */
function insertAfterAgentCard(state: ChatState, taskId: string, card: Item): ChatState {
  const owner = agentCardOf(state, taskId);
  if (!owner) return append(state, card);
  let at = state.items.indexOf(owner) + 1;
  const joined = (item: Item | undefined): boolean =>
    item?.kind === 'approval' && !!item.card.subagent && agentCardOf(state, item.card.subagent.taskId) === owner;
  while (at < state.items.length && joined(state.items[at])) at++;
  return { ...state, items: [...state.items.slice(0, at), card, ...state.items.slice(at)] };
}

function approvalCard(state: ChatState, id: string): ApprovalCard | undefined {
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item?.id === id && item.kind === 'approval') return item.card;
  }
  return undefined;
}

function cardToolUseId(state: ChatState, id: string, kind: 'approval' | 'review'): string | undefined {
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item?.id !== id || item.kind !== kind) continue;
    if (item.kind === 'approval') return item.card.toolUseId;
    if (item.kind === 'review') return item.toolUseId;
  }
  return undefined;
}

/** Events that say nothing about the answer: while only these arrive, the model is still thinking. */
function isQuiet(event: ChatEvent): boolean {
  return event.type === 'message' || event.type === 'tool_call_progress' || event.type === 'todo_update';
}

/** The answer came after all: the notices that said it was being asked for again have done their job. */
function withoutRetryNotices(state: ChatState): ChatState {
  let end = state.items.length;
  for (let last = state.items[end - 1]; last?.kind === 'notice' && last.retry; last = state.items[end - 1]) end--;
  return end === state.items.length ? state : { ...state, items: state.items.slice(0, end) };
}

/** The assistant message that was streaming is complete once anything else happens in the turn. */
function finishStreaming(state: ChatState): ChatState {
  const last = state.items[state.items.length - 1];
  if (!last || last.kind !== 'assistant' || !last.streaming) return state;
  return { ...state, items: [...state.items.slice(0, -1), { ...last, streaming: false }] };
}

function append(state: ChatState, item: Item): ChatState {
  return { ...state, items: [...state.items, item] };
}

function appendWithId(state: ChatState, make: (id: string) => Item): ChatState {
  return { ...append(state, make(`i${state.nextId}`)), nextId: state.nextId + 1 };
}

function updateItem<K extends Item['kind']>(
  state: ChatState,
  id: string,
  kind: K,
  update: (item: Extract<Item, { kind: K }>) => Extract<Item, { kind: K }>,
): ChatState {
  // Search from the end: the item being updated is almost always one of the last few.
  for (let index = state.items.length - 1; index >= 0; index--) {
    const item = state.items[index];
    if (item && item.id === id && item.kind === kind) {
      const items = state.items.slice();
      items[index] = update(item as Extract<Item, { kind: K }>);
      return { ...state, items };
    }
  }
  return state;
}
