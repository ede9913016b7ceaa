/**
 * The chat's MCP approval cards: one per MCP server of the open session that waits for the person — a server never
 * approved (what it runs), or one whose pinned tools changed (what changed). The reducer in chatModel.ts applies
 * `reduceMcpCards`; the host (mcpView.ts) feeds it the sidecar's server list; webview/mcpCard.ts draws it.
 * Pure: no DOM, no Node, no `vscode`.
 */

import type { McpServerInfo } from '../protocol';

/** `pending`: waits for the person; `approving`: the answer is with the sidecar; then `approved` or `failed`. */
export type McpCardState = 'pending' | 'approving' | 'approved' | 'failed';

export interface McpCard {
  name: string;
  scope: McpServerInfo['scope'];
  source: string;
  /** `new`: never approved (the card shows `command`); `changed`: its tools differ from the pin (the card shows `diff`). */
  kind: 'new' | 'changed';
  transport: McpServerInfo['transport'];
  command: string;
  changedTools: string[];
  diff: string;
  /** What the card is about: a new question (another command, another diff) opens it again. */
  key: string;
  state: McpCardState;
  outcome: string;
  /** "Not now" folded it to one line (it can be opened again). */
  folded: boolean;
}

export type McpCardAction =
  /** The open session's servers, as `toolgate/mcp/servers` listed them. */
  | { type: 'mcpServers'; servers: McpServerInfo[] }
  | { type: 'mcpCardFolded'; name: string; folded: boolean }
  | { type: 'mcpCardApproving'; name: string }
  /** The sidecar's answer to the approval: the server as it is now, or why it failed. */
  | { type: 'mcpCardOutcome'; name: string; server: McpServerInfo | null; error: string };

const CARD_ACTIONS: ReadonlySet<string> = new Set(['mcpServers', 'mcpCardFolded', 'mcpCardApproving', 'mcpCardOutcome']);

export function isMcpCardAction(action: { type: string }): action is McpCardAction {
  return CARD_ACTIONS.has(action.type);
}

/** A server waits for the person: not yet approved, or its tools changed since they were. */
export function waitsForApproval(server: McpServerInfo): boolean {
  return server.state === 'needs-approval' || server.changed;
}

/** What the person is asked about a server: a new question (another command, another diff) is asked again. */
export function approvalKey(server: McpServerInfo): string {
  return `${server.name}\n${server.changed ? server.diff : server.command}`;
}

export function cardFor(server: McpServerInfo): McpCard {
  return {
    name: server.name,
    scope: server.scope,
    source: server.source,
    kind: server.changed ? 'changed' : 'new',
    transport: server.transport,
    command: server.command,
    changedTools: server.changedTools,
    diff: server.diff,
    key: approvalKey(server),
    state: 'pending',
    outcome: '',
    folded: false,
  };
}

/**
 * A new server list keeps the cards still waiting (folded as they were, when the question is the same), adds those
 * now waiting, and keeps answered cards on screen (their outcome); a pending card whose server no longer waits
 * (approved from the MCP view, or removed from the settings) goes.
 */
export function reduceMcpCards(cards: readonly McpCard[], action: McpCardAction): McpCard[] {
  switch (action.type) {
    case 'mcpServers': {
      const waiting = action.servers.filter(waitsForApproval);
      const next: McpCard[] = [];
      for (const card of cards) {
        const server = waiting.find((candidate) => candidate.name === card.name);
        if (server) {
          const fresh = cardFor(server);
          next.push(fresh.key === card.key && card.state !== 'approved' ? { ...fresh, folded: card.folded } : fresh);
        } else if (card.state === 'approved' || card.state === 'failed' || card.state === 'approving') {
          next.push(card);
        }
      }
      for (const server of waiting) if (!cards.some((card) => card.name === server.name)) next.push(cardFor(server));
      return next;
    }
    case 'mcpCardFolded':
      return update(cards, action.name, (card) => ({ ...card, folded: action.folded }));
    case 'mcpCardApproving':
      return update(cards, action.name, (card) => ({ ...card, state: 'approving', outcome: '' }));
    case 'mcpCardOutcome':
      return update(cards, action.name, (card) => approvalOutcome(card, action.server, action.error));
  }
}

/**
 * The person sent their next message: an approved server's card has said what it had to ("offered from the next
 * message") and gives its room back to the conversation. A failed one stays: it still asks for something.
 */
export function withoutApprovedCards(cards: readonly McpCard[]): McpCard[] {
  return cards.filter((card) => card.state !== 'approved');
}

function update(cards: readonly McpCard[], name: string, change: (card: McpCard) => McpCard): McpCard[] {
  return cards.map((card) => (card.name === name ? change(card) : card));
}

function approvalOutcome(card: McpCard, server: McpServerInfo | null, error: string): McpCard {
  if (!server) return { ...card, state: 'failed', outcome: `Not approved: ${error}`, folded: false };
  if (server.state === 'failed' || server.state === 'crashed') {
    const why = server.reason || 'it stopped while starting';
    return { ...card, state: 'failed', outcome: `Approved, but it did not start: ${why}. Its log is in the MCP view.`, folded: false };
  }
  const count = server.tools.length;
  const tools = count === 1 ? 'its 1 tool is' : `its ${count} tools are`;
  return { ...card, state: 'approved', outcome: `Approved: ${tools} offered from the next message.`, folded: false };
}

/** The card's title line (also the folded line). */
export function cardTitle(card: McpCard): string {
  if (card.state === 'approved' || card.state === 'failed') return `MCP server "${card.name}"`;
  return card.kind === 'new'
    ? `MCP server "${card.name}" waits for your approval`
    : `The tools of MCP server "${card.name}" changed since you approved them`;
}

export function cardExplanation(card: McpCard): string {
  return card.kind === 'new'
    ? `It is configured in ${card.source} (${card.scope} settings) and does not start until you approve it. ` +
        'Its tools are then offered to the model; each call still asks you unless your rules allow it.'
    : `Its tools are hidden from the model until you approve the change (configured in ${card.source}).`;
}

/** One line of a tool-list diff, for drawing: added, removed, or context. */
export interface DiffLine {
  kind: 'added' | 'removed' | 'context' | 'hunk';
  text: string;
}

/** What changed, per tool, in words: added / removed / changed (and which of its parts). */
export interface ToolChange {
  tool: string;
  change: 'added' | 'removed' | 'changed';
  /** For a changed tool: "description", "input schema", "annotations" (empty when the diff does not say). */
  parts: string[];
  /** A changed description, when the diff shows both sides. */
  description?: { before: string; after: string };
}

const PART_NAMES: Record<string, string> = {
  description: 'description',
  input_schema: 'input schema',
  annotations: 'annotations',
};

/**
 * The sidecar's diff is a unified diff of the tool list as indented JSON (`{"tool": {"description": …,
 * "input_schema": …, "annotations": …}}`, two spaces a level): each changed line is attributed to the tool and the
 * part whose keys enclose it. Tools whose header line the hunks do not show are still listed (from `changedTools`),
 * as changed without parts.
 */
export function toolChanges(changedTools: readonly string[], diff: string): ToolChange[] {
  const headers = new Map<string, Set<Sign>>();
  const parts = new Map<string, Set<string>>();
  const descriptions = new Map<string, { before?: string; after?: string }>();
  // Where each side of the diff is: a removed line belongs to the old list's tool, an added one to the new list's.
  const cursors: Record<'-' | '+', { tool?: string; part?: string }> = { '-': {}, '+': {} };
  for (const line of diffLines(diff)) {
    if (line.kind === 'hunk') {
      cursors['-'] = {};
      cursors['+'] = {};
      continue;
    }
    const sign: Sign = line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' ';
    const sides = sign === ' ' ? (['-', '+'] as const) : ([sign] as const);
    const toolHeader = /^ {2}"((?:[^"\\]|\\.)*)": \{/.exec(line.text);
    const partKey = /^ {4}"(description|input_schema|annotations)":/.exec(line.text)?.[1];
    if (toolHeader?.[1] !== undefined) {
      const tool = JSON.parse(`"${toolHeader[1]}"`) as string;
      for (const side of sides) cursors[side] = { tool };
      headers.set(tool, (headers.get(tool) ?? new Set<Sign>()).add(sign));
      continue;
    }
    if (partKey !== undefined) for (const side of sides) cursors[side].part = partKey;
    if (sign === ' ') continue;
    const { tool, part } = cursors[sign];
    if (tool === undefined || part === undefined) continue;
    parts.set(tool, (parts.get(tool) ?? new Set<string>()).add(PART_NAMES[part] ?? part));
    const description = /^ {4}"description": ("(?:[^"\\]|\\.)*")/.exec(line.text)?.[1];
    if (description !== undefined) {
      const side = descriptions.get(tool) ?? {};
      side[sign === '+' ? 'after' : 'before'] = JSON.parse(description) as string;
      descriptions.set(tool, side);
    }
  }
  return [...changedTools].sort().map((name): ToolChange => {
    const signs = headers.get(name);
    if (signs?.size === 1 && signs.has('+')) return { tool: name, change: 'added', parts: [] };
    if (signs?.size === 1 && signs.has('-')) return { tool: name, change: 'removed', parts: [] };
    const side = descriptions.get(name);
    const change: ToolChange = { tool: name, change: 'changed', parts: [...(parts.get(name) ?? [])] };
    if (side?.before !== undefined && side.after !== undefined) change.description = { before: side.before, after: side.after };
    return change;
  });
}

type Sign = '-' | '+' | ' ';

/** The diff's lines, without its two file headers. */
export function diffLines(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const raw of diff.split('\n')) {
    if (raw === '' || raw.startsWith('--- ') || raw.startsWith('+++ ')) continue;
    if (raw.startsWith('@@')) lines.push({ kind: 'hunk', text: raw });
    else if (raw.startsWith('+')) lines.push({ kind: 'added', text: raw.slice(1) });
    else if (raw.startsWith('-')) lines.push({ kind: 'removed', text: raw.slice(1) });
    else lines.push({ kind: 'context', text: raw.slice(1) });
  }
  return lines;
}

/** "Added: a", "Removed: b", "Changed: c (description, input schema)". */
export function changeSummary(change: ToolChange): string {
  const verb = change.change === 'added' ? 'Added' : change.change === 'removed' ? 'Removed' : 'Changed';
  return change.parts.length > 0 ? `${verb}: ${change.tool} (${change.parts.join(', ')})` : `${verb}: ${change.tool}`;
}
