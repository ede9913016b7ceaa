/**
 * The MCP view: the current session's MCP servers as a tree (server → state, tools, last error), and the commands
 * on them (approve / re-approve, restart, revoke, show log). The sidecar decides everything (toolgate/mcp/*); this
 * module only shows its answers and asks the person before an approval. vscodeApi.ts turns the nodes into tree items.
 */

import type { ChatPresence } from '../chat/chatStore';
import { Emitter } from '../host';
import type { Disposable, Notifier } from '../host';
import type { McpChangedParams, McpLogResult, McpServerInfo, McpServerResult, McpServersResult, McpToolInfo } from '../protocol';
import type { McpCardAction } from '../shared/mcpCard';
import { approvalKey, waitsForApproval } from '../shared/mcpCard';
import type { McpCardChoice } from '../shared/messages';
import { failureReason } from '../sidecar/sidecarClient';

/** The sidecar's MCP methods (SidecarClient implements them). */
export interface McpClient {
  mcpServers(sessionId: string): Promise<McpServersResult>;
  mcpApprove(sessionId: string, name: string): Promise<McpServerResult>;
  mcpRevoke(sessionId: string, name: string): Promise<McpServerResult>;
  mcpRestart(sessionId: string, name: string): Promise<McpServerResult>;
  mcpLog(sessionId: string, name: string): Promise<McpLogResult>;
  /** The sidecar's word that a session's servers changed while it runs (toolgate/mcp/changed). */
  onMcpChanged?(handler: (params: McpChangedParams) => void): void;
}

export const MCP_VIEW_ID = 'toolgate.mcp';

export type McpNode =
  | { kind: 'server'; server: McpServerInfo }
  | { kind: 'tool'; server: string; tool: McpToolInfo }
  | { kind: 'note'; id: string; label: string; tooltip?: string; icon: string };

/** What a tree item shows; `contextValue` decides which commands its menu offers (package.json's `when`). */
export interface TreeNodeSpec {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  contextValue?: string;
  icon?: string;
  expanded?: boolean;
  /** Children to show (undefined: a leaf). */
  collapsible: boolean;
}

const STATE_ICONS: Record<McpServerInfo['state'], string> = {
  running: 'pass',
  starting: 'loading~spin',
  stopped: 'circle-outline',
  'needs-approval': 'shield',
  changed: 'warning',
  crashed: 'error',
  failed: 'error',
  'blocked-untrusted': 'lock',
};

/** Which commands a server's menu offers: approve when it needs approval or its tools changed; restart once approved. */
export function serverContext(server: McpServerInfo): string {
  const parts = ['mcpServer'];
  if (server.state === 'needs-approval' || server.changed) parts.push('approvable');
  if (server.approved && server.state !== 'blocked-untrusted') parts.push('restartable', 'revocable');
  return parts.join(' ');
}

export function nodeSpec(node: McpNode): TreeNodeSpec {
  switch (node.kind) {
    case 'server': {
      const { server } = node;
      const state = server.changed && server.state !== 'changed' ? `${server.state}, tools changed` : server.state;
      return {
        id: `server:${server.name}`,
        label: server.name,
        description: `${state} · ${server.scope}`,
        tooltip: [`${server.command}`, `from ${server.source}`, server.reason].filter(Boolean).join('\n'),
        contextValue: serverContext(server),
        icon: STATE_ICONS[server.state],
        collapsible: true,
        expanded: server.state !== 'running',
      };
    }
    case 'tool': {
      const { tool } = node;
      const notes = [tool.readOnly ? 'read-only (your settings)' : '', tool.readOnlyHint ? 'server says read-only' : ''];
      return {
        id: `tool:${node.server}:${tool.name}`,
        label: tool.originalName,
        description: notes.filter(Boolean).join(' · '),
        tooltip: `${tool.name}\n${tool.description}`,
        icon: 'tools',
        collapsible: false,
      };
    }
    case 'note':
      return { id: node.id, label: node.label, tooltip: node.tooltip ?? node.label, icon: node.icon, collapsible: false };
  }
}

/** A server's children: why it is in its state (or its last error), what changed, then its tools. */
export function serverChildren(server: McpServerInfo): McpNode[] {
  const children: McpNode[] = [];
  if (server.reason) {
    const failed = server.state === 'failed' || server.state === 'crashed';
    const label = `${failed ? 'Last error' : 'Why'}: ${inEditorWords(server)}`;
    children.push({ kind: 'note', id: `reason:${server.name}`, label, tooltip: server.reason, icon: failed ? 'error' : 'info' });
  }
  if (server.changed) {
    const label = `Changed since approval: ${server.changedTools.join(', ')} (hidden until re-approved)`;
    children.push({ kind: 'note', id: `changed:${server.name}`, label, tooltip: server.diff, icon: 'diff' });
  }
  for (const tool of server.tools) children.push({ kind: 'tool', server: server.name, tool });
  if (server.tools.length === 0 && !server.reason) {
    children.push({ kind: 'note', id: `none:${server.name}`, label: 'No tools listed yet', icon: 'info' });
  }
  return children;
}

/**
 * The sidecar's reason speaks to whoever runs it, and for a server waiting for approval it names the CLI command
 * (`toolgate mcp approve …`); in the editor the way is the Approve button, so the reason says that instead.
 */
export function inEditorWords(server: McpServerInfo): string {
  if (server.state !== 'needs-approval' && !server.changed) return server.reason;
  const what = server.changed ? 'Its tools changed since you approved them' : 'It has not been approved with its current settings';
  return `${what}: approve it with the ✓ button on this row, or with Approve on its card in the chat.`;
}

/** The confirmation an approval asks for: what runs, or what changed (the diff). */
export function approvalQuestion(server: McpServerInfo): { message: string; detail: string; action: string } {
  if (server.changed) {
    const diff = server.diff.length > 4000 ? `${server.diff.slice(0, 4000)}\n… (the rest is in the MCP server's entry)` : server.diff;
    return {
      message: `Re-approve the MCP server "${server.name}"? Its tools changed since you approved them: ${server.changedTools.join(', ')}.`,
      detail: diff,
      action: 'Re-approve',
    };
  }
  return {
    message: `Approve the MCP server "${server.name}" (${server.scope} settings)?`,
    detail:
      `It runs: ${server.command}\nConfigured in ${server.source}.\n\n` +
      'Its tools are offered to the model; each call still asks you unless your permission rules allow it.',
    action: 'Approve',
  };
}

export interface McpViewDeps {
  client: McpClient;
  /** The session whose servers are shown (the chat's); undefined when no sidecar runs. */
  session: () => Promise<string | undefined>;
  notifier: Notifier;
  /** Show a read-only text (a server's log). */
  openText: (title: string, text: string) => Promise<void>;
  /** The chat, where the approval cards are shown; a notification asks instead while it is hidden. */
  chat?: { dispatch(action: McpCardAction): void; presence: Pick<ChatPresence, 'isVisible' | 'onDidChangeVisibility'> };
}

export class McpView implements Disposable {
  private servers: McpServerInfo[] = [];
  private message: string | undefined = 'Open the toolgate chat to see its MCP servers.';
  private readonly changes = new Emitter<void>();
  readonly onDidChange = this.changes.event;

  /** Whether the view has been shown: until then nothing is asked of the sidecar. */
  private wanted = false;
  /** Servers (and what about them) already put to the person in a notification: asked once, not at every turn. */
  private readonly offered = new Set<string>();

  private readonly visibility: Disposable | undefined;

  constructor(private readonly deps: McpViewDeps) {
    // A card that waited in a visible chat is put to the person in a notification once the chat is hidden.
    this.visibility = deps.chat?.presence.onDidChangeVisibility((visible) => {
      if (!visible) void this.offerApprovals();
    });
    deps.client.onMcpChanged?.((params) => void this.changed(params));
  }

  /** A session's servers changed while it runs (tools changed mid-turn, a crash, a restart): the view and the
   * chat's cards show it now, not when the turn ends. Another session's news is not shown. */
  async changed(params: McpChangedParams): Promise<void> {
    if (params.sessionId !== (await this.deps.session())) return;
    this.showListing(params.servers);
    await this.offerApprovals();
  }

  dispose(): void {
    this.visibility?.dispose();
  }

  /** The view came into sight. */
  shown(): Promise<void> {
    this.wanted = true;
    return this.refresh();
  }

  /** The chat moved on: another session is on screen, or a turn started (servers start with the first) or ended. */
  chatChanged(action: { type: string; event?: { type: string } }): void {
    // A session opened: its servers are listed (which starts nothing) whether or not the view is open, so that a
    // server waiting for approval is put to the person before they wonder where its tools are.
    if (action.type === 'sessionOpened') {
      void this.refresh().then(() => this.offerApprovals());
      return;
    }
    // Turns refresh the list for the view once shown, and always for the chat's cards (tools may change mid-session).
    if (!this.wanted && !this.deps.chat) return;
    const event = action.type === 'event' ? action.event?.type : undefined;
    if (event === 'request_started' || event === 'turn_end') void this.refresh().then(() => this.offerApprovals());
  }

  /** A notification for each server that waits for the person (not yet approved, or its tools changed), once per
   * server and reason, while the chat (where its card is) is hidden: "Review…" asks as the view's approve does. */
  async offerApprovals(): Promise<void> {
    if (this.deps.chat?.presence.isVisible()) return;
    for (const server of this.servers.filter(waitsForApproval)) {
      const key = approvalKey(server);
      if (this.offered.has(key)) continue;
      this.offered.add(key);
      const why = server.changed
        ? `The tools of MCP server "${server.name}" changed since you approved them (${server.changedTools.join(', ')}); they are hidden until you review the change.`
        : `MCP server "${server.name}" (${server.scope} settings) does not start until you approve it.`;
      void this.deps.notifier.show('info', why, 'Review…', 'Not Now').then((picked) => {
        if (picked === 'Review…') return this.approve(server.name);
      });
    }
  }

  /** The tree's content for vscodeApi.registerTreeView. */
  tree(): { roots(): McpNode[]; children(node: McpNode): McpNode[]; onDidChange(listener: () => void): { dispose(): void } } {
    return { roots: () => this.roots(), children: (node) => this.children(node), onDidChange: (listener) => this.onDidChange(listener) };
  }

  roots(): McpNode[] {
    if (this.message) return [{ kind: 'note', id: 'message', label: this.message, icon: 'info' }];
    return this.servers.map((server) => ({ kind: 'server', server }));
  }

  children(node: McpNode): McpNode[] {
    return node.kind === 'server' ? serverChildren(node.server) : [];
  }

  server(name: string): McpServerInfo | undefined {
    return this.servers.find((server) => server.name === name);
  }

  async refresh(): Promise<void> {
    try {
      const sessionId = await this.deps.session();
      if (!sessionId) {
        this.show([], 'The toolgate sidecar is not running, so no MCP server can be listed.');
        return;
      }
      const result = await this.deps.client.mcpServers(sessionId);
      this.showListing(result.servers);
      for (const problem of result.problems) void this.deps.notifier.show('warning', `MCP settings: ${problem}`);
    } catch (error) {
      this.show([], `MCP servers cannot be listed: ${failureReason(error)}`);
    }
  }

  /** Approve (or re-approve, after its tools changed) once the person confirms; then it starts in the session. */
  async approve(target: unknown): Promise<void> {
    const server = await this.choose(target, 'Approve which MCP server?');
    if (!server) return;
    const question = approvalQuestion(server);
    if (!(await this.deps.notifier.confirm(question.message, question.detail, question.action))) return;
    await this.act(server.name, (sessionId) => this.deps.client.mcpApprove(sessionId, server.name));
  }

  /** An approval card's answer. The card showed what runs (or what changed), so Approve asks nothing more. */
  async cardChoice(name: string, choice: McpCardChoice): Promise<void> {
    const chat = this.deps.chat;
    if (!chat) return;
    if (choice !== 'approve') {
      const server = this.server(name);
      // "Not now" also answers the notification: it is not put to the person again for the same question.
      if (choice === 'notNow' && server) this.offered.add(approvalKey(server));
      chat.dispatch({ type: 'mcpCardFolded', name, folded: choice === 'notNow' });
      return;
    }
    chat.dispatch({ type: 'mcpCardApproving', name });
    const outcome = await this.act(name, (sessionId) => this.deps.client.mcpApprove(sessionId, name));
    chat.dispatch({ type: 'mcpCardOutcome', name, server: outcome.server ?? null, error: outcome.error ?? '' });
  }

  async restart(target: unknown): Promise<void> {
    const server = await this.choose(target, 'Restart which MCP server?');
    if (server) await this.act(server.name, (sessionId) => this.deps.client.mcpRestart(sessionId, server.name));
  }

  async revoke(target: unknown): Promise<void> {
    const server = await this.choose(target, 'Withdraw the approval of which MCP server?');
    if (server) await this.act(server.name, (sessionId) => this.deps.client.mcpRevoke(sessionId, server.name));
  }

  async showLog(target: unknown): Promise<void> {
    const server = await this.choose(target, "Show which MCP server's log?");
    const sessionId = server ? await this.deps.session() : undefined;
    if (!server || !sessionId) return;
    try {
      const log = await this.deps.client.mcpLog(sessionId, server.name);
      const head = log.truncated ? '… (only the end of the log is shown)\n' : '';
      await this.deps.openText(`MCP ${server.name}: ${log.path}`, head + (log.text || '(the server has written nothing to stderr)'));
    } catch (error) {
      void this.deps.notifier.show('error', `The log of MCP server "${server.name}" cannot be shown: ${failureReason(error)}`);
    }
  }

  /** Ask the sidecar, show what came of it, then list the servers again; the server as it is now, or why not. */
  private async act(
    name: string,
    request: (sessionId: string) => Promise<McpServerResult>,
  ): Promise<{ server?: McpServerInfo; error?: string }> {
    const sessionId = await this.deps.session();
    if (!sessionId) return { error: 'the toolgate sidecar is not running.' };
    let outcome: { server?: McpServerInfo; error?: string };
    try {
      const { server } = await request(sessionId);
      outcome = { server };
      this.servers = this.servers.map((known) => (known.name === name ? server : known));
      this.changes.fire();
      if (server.state === 'failed' || server.state === 'crashed') {
        // Not awaited: the answer (and a card's outcome) does not wait for the notification to be dismissed.
        void this.deps.notifier.show('error', `MCP server "${name}" did not start: ${server.reason}`, 'Show Log').then((picked) => {
          if (picked === 'Show Log') return this.showLog(name);
        });
      } else if (server.state !== 'running' && server.reason) {
        void this.deps.notifier.show('warning', `MCP server "${name}" is ${server.state}: ${server.reason}`);
      }
    } catch (error) {
      outcome = { error: failureReason(error) };
      void this.deps.notifier.show('error', `MCP server "${name}": ${outcome.error}`);
    }
    await this.refresh();
    return outcome;
  }

  /** The server a command names: its tree node, its name, or one the person picks. */
  private async choose(target: unknown, title: string): Promise<McpServerInfo | undefined> {
    if (typeof target === 'string') return this.server(target);
    if (isServerNode(target)) return this.server(target.server.name) ?? target.server;
    if (this.servers.length === 0) await this.refresh();
    const picked = await this.deps.notifier.pick(
      this.servers.map((server) => ({ label: server.name, description: server.state, server })),
      { title },
    );
    return picked?.server;
  }

  /** A session's servers as the sidecar listed them, in the view and on the chat's cards. */
  private showListing(servers: McpServerInfo[]): void {
    // None configured: the view's welcome (package.json viewsWelcome) says how to add one, with buttons.
    this.show(servers, undefined);
    this.deps.chat?.dispatch({ type: 'mcpServers', servers });
  }

  private show(servers: McpServerInfo[], message: string | undefined): void {
    this.servers = servers;
    this.message = message;
    this.changes.fire();
  }
}

function isServerNode(value: unknown): value is { kind: 'server'; server: McpServerInfo } {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'server';
}
