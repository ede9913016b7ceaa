/**
 * "toolgate: Open Permission Rules": the rules in force for the open session (`toolgate/settings/get`), grouped as
 * the engine consults them (deny, ask, allow), with where each comes from. Pick a rule to remove it
 * (`toolgate/settings/removeRule`) or open its file; add one (`toolgate/settings/addRule`) in the scope of your
 * choice. The sidecar validates every rule: a refusal comes back into the input box with its reason. Quick picks
 * only; the list is shown again after each change, until Escape.
 */

import type { Notifier, QuickPickItem } from '../host';
import type { SettingsFiles } from './permissionFiles';
import type { RuleBehavior, RuleChangeResult, RuleEntry, RuleScope, Settings, SidecarSettingsProblem } from '../protocol';
import { RULE_BEHAVIORS, RULE_SCOPES } from '../protocol';
import { SCOPE_LABELS, SCOPE_WORDS } from '../shared/scopes';
import { failureReason } from '../sidecar/sidecarClient';

export interface RulesClient {
  getSettings(sessionId: string): Promise<Settings>;
  addRule(sessionId: string, rule: string, behavior: RuleBehavior, scope: RuleScope): Promise<RuleChangeResult>;
  removeRule(sessionId: string, rule: string, behavior: RuleBehavior, scope: RuleScope): Promise<RuleChangeResult>;
}

export interface RulesViewDeps {
  notifier: Notifier;
  client: RulesClient;
  /** The session whose rules are shown (a new one if none is open); undefined while no sidecar runs. */
  session(): Promise<string | undefined>;
  /** The picker of rules files (for "Open a settings file…", and to explain when there is no sidecar to ask). */
  openRulesFile(files?: SettingsFiles): Promise<void>;
  /** Open a settings file at the place the sidecar named for a rule or a problem (or at the top). */
  openFile(path: string, at: { line: number | null; column: number | null }): Promise<void>;
  /** Every answer from settings/get (and from rule changes) also goes to the chat's problems banner. */
  onSettings(settings: Settings): void;
}

const BEHAVIOR_HEADINGS: Record<RuleBehavior, string> = {
  deny: 'Deny: never allowed, whatever else says so',
  ask: 'Ask: always asked about',
  allow: 'Allow: run without asking',
};

const ADD_LABELS: Record<RuleBehavior, string> = {
  allow: '$(add) Add an allow rule…',
  ask: '$(add) Add an ask rule…',
  deny: '$(add) Add a deny rule…',
};

/** Where a rule comes from, in words; and whether the rules view can remove it (the sidecar keeps only these). */
export function describeSource(entry: RuleEntry): { label: string; removable: RuleScope | undefined } {
  switch (entry.source) {
    case 'session':
    case 'local':
    case 'project':
    case 'user':
      return { label: SCOPE_WORDS[entry.source].source, removable: entry.source };
    case 'cli':
      return { label: 'the command line', removable: undefined };
    default:
      return { label: entry.file ? `the settings file ${entry.file}` : entry.source, removable: undefined };
  }
}

type Item = QuickPickItem &
  (
    | { action: 'add'; behavior: RuleBehavior }
    | { action: 'files' }
    | { action: 'problem'; problem: SidecarSettingsProblem }
    | { action: 'rule'; entry: RuleEntry }
    | { action: 'none' }
  );

export function ruleItems(settings: Settings): Item[] {
  const items: Item[] = [
    ...RULE_BEHAVIORS.slice()
      .reverse()
      .map((behavior): Item => ({ label: ADD_LABELS[behavior], action: 'add', behavior })),
    { label: '$(go-to-file) Open a settings file…', action: 'files' },
  ];
  if (settings.problems.length > 0) {
    items.push({ label: 'Problems: these settings are not in force', separator: true, action: 'none' });
    for (const problem of settings.problems) {
      items.push({ label: `$(warning) ${problem.message}`, action: 'problem', problem });
    }
  }
  if (settings.rules.length === 0) {
    // The editor hides a heading with nothing under it, so "none" has to be an item of its own.
    items.push(
      { label: 'Rules in force', separator: true, action: 'none' },
      { label: 'No rules yet', description: 'toolgate asks before any call that is not read-only', action: 'none' },
    );
  }
  for (const behavior of RULE_BEHAVIORS) {
    const rules = settings.rules.filter((entry) => entry.behavior === behavior);
    if (rules.length === 0) continue;
    items.push({ label: BEHAVIOR_HEADINGS[behavior], separator: true, action: 'none' });
    for (const entry of rules) {
      items.push({
        label: entry.rule,
        description: describeSource(entry).label,
        detail: entry.warning ?? undefined,
        action: 'rule',
        entry,
      });
    }
  }
  return items;
}

export class RulesView {
  constructor(private readonly deps: RulesViewDeps) {}

  async show(): Promise<void> {
    const { notifier, client } = this.deps;
    const sessionId = await this.deps.session();
    if (!sessionId) {
      // Without a sidecar there is nobody to tell which rules are in force; the files can still be opened.
      await this.deps.openRulesFile();
      return;
    }
    for (;;) {
      let settings: Settings;
      try {
        settings = await client.getSettings(sessionId);
      } catch (error) {
        void notifier.show('error', `toolgate could not list the permission rules: ${failureReason(error)}`);
        await this.deps.openRulesFile();
        return;
      }
      this.deps.onSettings(settings);
      const picked = await notifier.pick(ruleItems(settings), {
        title: `toolgate: Permission Rules (${settings.rules.length} in force)`,
        placeholder: 'Pick a rule to remove it or open its file, or add one',
      });
      if (!picked) return;
      switch (picked.action) {
        case 'add':
          await this.add(sessionId, picked.behavior);
          break;
        case 'files':
          await this.deps.openRulesFile(settings);
          return;
        case 'problem':
          if (picked.problem.file) {
            await this.deps.openFile(picked.problem.file, picked.problem);
            return;
          }
          break;
        case 'rule':
          if (await this.ruleActions(sessionId, picked.entry)) return;
          break;
        case 'none':
          break;
      }
    }
  }

  /** What to do with one rule. True when the view should close (a file was opened). */
  private async ruleActions(sessionId: string, entry: RuleEntry): Promise<boolean> {
    const { notifier } = this.deps;
    const { label, removable } = describeSource(entry);
    type Action = QuickPickItem & { action: 'remove' | 'open' | 'back' };
    const actions: Action[] = [];
    if (removable) actions.push({ label: '$(trash) Remove this rule', description: `from ${label}`, action: 'remove' });
    if (entry.file) actions.push({ label: '$(go-to-file) Open its settings file', detail: entry.file, action: 'open' });
    actions.push({ label: '$(arrow-left) Back to the rules', action: 'back' });
    const picked = await notifier.pick(actions, {
      title: `${entry.behavior} ${entry.rule}`,
      placeholder: removable ? `From ${label}` : `From ${label}: toolgate cannot change it from here`,
    });
    if (!picked || picked.action === 'back') return false;
    if (picked.action === 'open' && entry.file) {
      await this.deps.openFile(entry.file, entry);
      return true;
    }
    if (picked.action === 'remove') await this.removeFrom(sessionId, entry);
    return false;
  }

  /** The Permission Rules view's Remove on a rule (rulesTree.ts): from the scope it is kept in. */
  async remove(entry: RuleEntry): Promise<void> {
    const sessionId = await this.deps.session();
    if (sessionId) await this.removeFrom(sessionId, entry);
  }

  /** The view's Add: which kind of rule, then the rule and its scope. */
  async addRule(): Promise<void> {
    const sessionId = await this.deps.session();
    if (!sessionId) {
      await this.deps.openRulesFile();
      return;
    }
    const kinds = RULE_BEHAVIORS.slice()
      .reverse()
      .map((behavior) => ({ label: ADD_LABELS[behavior], behavior }));
    const picked = await this.deps.notifier.pick(kinds, { title: 'toolgate: Add a Permission Rule', placeholder: 'Which kind of rule?' });
    if (picked) await this.add(sessionId, picked.behavior);
  }

  private async removeFrom(sessionId: string, entry: RuleEntry): Promise<void> {
    const { removable } = describeSource(entry);
    if (!removable) return;
    try {
      const result = await this.deps.client.removeRule(sessionId, entry.rule, entry.behavior, removable);
      this.deps.onSettings(result.settings);
    } catch (error) {
      void this.deps.notifier.show('error', `The rule ${entry.rule} was not removed: ${failureReason(error)}`);
    }
  }

  /** Type a rule, pick a scope, save it. A rule the sidecar refuses comes back with the reason, to be corrected. */
  private async add(sessionId: string, behavior: RuleBehavior): Promise<void> {
    const { notifier, client } = this.deps;
    let rule = '';
    let error: string | undefined;
    for (;;) {
      const typed = await notifier.input({
        title: `Add ${behavior === 'allow' ? 'an allow' : behavior === 'ask' ? 'an ask' : 'a deny'} rule`,
        prompt:
          'A tool name, or Tool(specifier): Bash(npm test:*) is a command prefix, Bash(git * --oneline) a glob, ' +
          'Edit(src/**) and Read(./.env) are paths, WebFetch(domain:example.com) a site.',
        placeholder: 'Bash(npm test:*)',
        value: rule,
        error,
      });
      if (typed === undefined || typed.trim() === '') return;
      rule = typed.trim();
      const scopes = RULE_SCOPES.map((scope) => ({ label: SCOPE_LABELS[scope], scope }));
      const scope = await notifier.pick(scopes, { title: `${behavior} ${rule}`, placeholder: 'Where to keep it' });
      if (!scope) return;
      let result: RuleChangeResult;
      try {
        result = await client.addRule(sessionId, rule, behavior, scope.scope);
      } catch (failure) {
        error = failureReason(failure);
        continue;
      }
      this.deps.onSettings(result.settings);
      for (const warning of result.warnings) void notifier.show('warning', warning);
      if (!result.changed) void notifier.show('info', `${behavior} ${rule} was already there (${scope.label}).`);
      return;
    }
  }
}
