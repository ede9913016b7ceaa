/**
 * The Permission Rules view: the open session's rules in force (`toolgate/settings/get`) as a tree, grouped as the
 * engine consults them (deny, ask, allow), each with where it comes from; on a rule, Remove (the scopes toolgate
 * keeps) and Edit (its settings file, at the rule). What is not in force is listed first. The sidecar decides; this
 * only shows its answers. vscodeApi.ts turns the nodes into tree items; rulesView.ts does the removing and adding.
 */

import { Emitter } from '../host';
import type { Disposable } from '../host';
import type { RuleBehavior, RuleEntry, Settings, SidecarSettingsProblem } from '../protocol';
import { RULE_BEHAVIORS } from '../protocol';
import type { TreeNodeSpec } from '../mcp/mcpView';
import { failureReason } from '../sidecar/sidecarClient';
import { describeSource } from './rulesView';

export const RULES_VIEW_ID = 'toolgate.rules';

export type RulesNode =
  | { kind: 'group'; behavior: RuleBehavior; count: number }
  | { kind: 'problems'; problems: SidecarSettingsProblem[] }
  | { kind: 'problem'; index: number; problem: SidecarSettingsProblem }
  | { kind: 'rule'; entry: RuleEntry }
  | { kind: 'note'; label: string };

const GROUP_LABELS: Record<RuleBehavior, string> = {
  deny: 'Deny: never allowed',
  ask: 'Ask: always asked about',
  allow: 'Allow: run without asking',
};

const GROUP_ICONS: Record<RuleBehavior, string> = { deny: 'circle-slash', ask: 'question', allow: 'pass' };

export function rulesNodeSpec(node: RulesNode): TreeNodeSpec {
  switch (node.kind) {
    case 'group':
      return {
        id: `group:${node.behavior}`,
        label: GROUP_LABELS[node.behavior],
        description: String(node.count),
        icon: GROUP_ICONS[node.behavior],
        collapsible: true,
        expanded: true,
      };
    case 'problems':
      return { id: 'problems', label: 'Not in force', description: String(node.problems.length), icon: 'warning', collapsible: true, expanded: true };
    case 'problem':
      return {
        id: `problem:${node.index}`,
        label: node.problem.message,
        tooltip: node.problem.message,
        contextValue: node.problem.file ? 'ruleProblem editable' : 'ruleProblem',
        icon: 'warning',
        collapsible: false,
      };
    case 'rule': {
      const { entry } = node;
      const source = describeSource(entry);
      const parts = ['rule'];
      if (source.removable) parts.push('removable');
      if (entry.file) parts.push('editable');
      return {
        id: `rule:${entry.behavior}:${entry.source}:${entry.rule}`,
        label: entry.rule,
        description: `from ${source.label}`,
        tooltip: [`${entry.behavior} ${entry.rule}`, `From ${source.label}.`, entry.warning ?? ''].filter(Boolean).join('\n'),
        contextValue: parts.join(' '),
        icon: entry.warning ? 'warning' : undefined,
        collapsible: false,
      };
    }
    case 'note':
      return { id: `note:${node.label}`, label: node.label, icon: 'info', collapsible: false };
  }
}

/** The tree's top level: what is not in force, then a group per behaviour that has rules. None: the welcome shows. */
export function rulesRoots(settings: Pick<Settings, 'rules' | 'problems'>): RulesNode[] {
  const roots: RulesNode[] = [];
  if (settings.problems.length > 0) roots.push({ kind: 'problems', problems: settings.problems });
  for (const behavior of RULE_BEHAVIORS) {
    const count = settings.rules.filter((entry) => entry.behavior === behavior).length;
    if (count > 0) roots.push({ kind: 'group', behavior, count });
  }
  return roots;
}

/** The rule a view command was run on (its inline button passes the node). */
export function ruleOf(target: unknown): RuleEntry | undefined {
  const node = target as RulesNode | undefined;
  return node?.kind === 'rule' ? node.entry : undefined;
}

/** Where Edit opens: a rule's or a problem's settings file, at its place. */
export function placeOf(target: unknown): { file: string; line: number | null; column: number | null } | undefined {
  const node = target as RulesNode | undefined;
  const place = node?.kind === 'rule' ? node.entry : node?.kind === 'problem' ? node.problem : undefined;
  return place?.file ? { file: place.file, line: place.line, column: place.column } : undefined;
}

export interface RulesTreeDeps {
  client: { getSettings(sessionId: string): Promise<Settings> };
  /** The session whose rules are shown; undefined while no sidecar runs. */
  session(): Promise<string | undefined>;
}

export class RulesTree {
  private settings: Settings | null = null;
  private message: string | undefined;
  private visible = false;
  private readonly changes = new Emitter<void>();

  constructor(private readonly deps: RulesTreeDeps) {}

  readonly onDidChange = (listener: () => void): Disposable => this.changes.event(listener);

  /** The tree's content for vscodeApi.registerTreeView. */
  tree(): { roots(): RulesNode[]; children(node: RulesNode): RulesNode[]; onDidChange(listener: () => void): Disposable } {
    return { roots: () => this.roots(), children: (node) => this.children(node), onDidChange: this.onDidChange };
  }

  roots(): RulesNode[] {
    if (this.message) return [{ kind: 'note', label: this.message }];
    return this.settings ? rulesRoots(this.settings) : [];
  }

  children(node: RulesNode): RulesNode[] {
    const settings = this.settings;
    if (!settings) return [];
    if (node.kind === 'group') {
      return settings.rules.filter((entry) => entry.behavior === node.behavior).map((entry) => ({ kind: 'rule', entry }));
    }
    if (node.kind === 'problems') return node.problems.map((problem, index) => ({ kind: 'problem', index, problem }));
    return [];
  }

  /** An answer the rules commands already have (a rule added or removed): shown without asking again. */
  show(settings: Settings): void {
    this.settings = settings;
    this.message = undefined;
    this.changes.fire();
  }

  /** The view came into sight: from now on it follows the session. */
  shown(): void {
    this.visible = true;
    void this.refresh();
  }

  /** The session or its settings changed: asked again, if anyone is looking. */
  sessionChanged(): void {
    if (this.visible) void this.refresh();
  }

  async refresh(): Promise<void> {
    try {
      const sessionId = await this.deps.session();
      if (!sessionId) {
        this.settings = null;
        this.message = 'The toolgate sidecar is not running, so the rules in force cannot be listed.';
      } else {
        this.settings = await this.deps.client.getSettings(sessionId);
        this.message = undefined;
      }
    } catch (error) {
      this.settings = null;
      this.message = `The rules cannot be listed: ${failureReason(error)}`;
    }
    this.changes.fire();
  }
}
