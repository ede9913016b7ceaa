import { describe, expect, it } from 'vitest';

import type { SettingsFiles } from '../src/settings/permissionFiles';
import type { RuleBehavior, RuleChangeResult, RuleEntry, RuleScope, Settings, SidecarSettingsProblem } from '../src/protocol';
import type { RulesClient } from '../src/settings/rulesView';
import { RulesView, describeSource, ruleItems } from '../src/settings/rulesView';
import { SidecarError } from '../src/sidecar/sidecarClient';
import type { RulesNode } from '../src/settings/rulesTree';
import { RulesTree, placeOf, ruleOf, rulesNodeSpec } from '../src/settings/rulesTree';
import { FakeNotifier, settle } from './fakes';

const PROJECT = '/ws/.toolgate/settings.json';

/** The sidecar's rule book in miniature: settings/get lists it, addRule/removeRule change it (or refuse). */
class FakeRulesClient implements RulesClient {
  rules: RuleEntry[] = [
    { rule: 'Read(./.env)', behavior: 'deny', source: 'project', file: PROJECT, line: 4, column: 12, warning: null },
    { rule: 'Bash(git log:*)', behavior: 'allow', source: 'session', file: null, line: null, column: null, warning: null },
    { rule: 'Bash(npm test)', behavior: 'allow', source: 'cli', file: null, line: null, column: null, warning: null },
  ];
  problems: SidecarSettingsProblem[] = [];
  refusals: string[] = [];
  readonly calls: string[] = [];

  settings(): Settings {
    return {
      sessionId: 's1',
      mode: 'default',
      reviewEdits: 'when_asking',
      rules: [...this.rules],
      settingsFiles: { project: PROJECT, local: '/ws/.toolgate/settings.local.json', user: '/home/u/.config/toolgate/settings.json' },
      flagFiles: [],
      sandbox: null,
      problems: this.problems,
    };
  }

  async getSettings(): Promise<Settings> {
    this.calls.push('get');
    return this.settings();
  }

  async addRule(_sessionId: string, rule: string, behavior: RuleBehavior, scope: RuleScope): Promise<RuleChangeResult> {
    this.calls.push(`add ${behavior} ${rule} ${scope}`);
    const refusal = this.refusals.shift();
    if (refusal) throw new SidecarError('toolgate/settings/addRule', `toolgate/settings/addRule failed: ${refusal}`, -32602, refusal);
    this.rules.push({ rule, behavior, source: scope, file: scope === 'session' ? null : PROJECT, line: null, column: null, warning: null });
    return { changed: true, file: null, warnings: rule.startsWith('Bash(python') ? ['Bash(python:*) runs any code.'] : [], coversCall: null, settings: this.settings() };
  }

  async removeRule(_sessionId: string, rule: string, behavior: RuleBehavior, scope: RuleScope): Promise<RuleChangeResult> {
    this.calls.push(`remove ${behavior} ${rule} ${scope}`);
    this.rules = this.rules.filter((entry) => !(entry.rule === rule && entry.behavior === behavior));
    return { changed: true, file: null, warnings: [], coversCall: null, settings: this.settings() };
  }
}

/** `session`: what the chat gives the rules view (null: no sidecar runs). */
function setup(session: string | null = 's1') {
  const notifier = new FakeNotifier();
  const client = new FakeRulesClient();
  const opened: { path: string; line: number | null; column: number | null }[] = [];
  const fallbacks: (SettingsFiles | undefined)[] = [];
  const seen: Settings[] = [];
  const view = new RulesView({
    notifier,
    client,
    session: async () => session ?? undefined,
    openRulesFile: async (files) => {
      fallbacks.push(files);
    },
    openFile: async (path, at) => {
      opened.push({ path, line: at.line, column: at.column });
    },
    onSettings: (settings) => seen.push(settings),
  });
  return { view, notifier, client, opened, fallbacks, seen };
}

describe('ruleItems', () => {
  it('lists the rules in force as the engine consults them, with where each comes from', () => {
    const client = new FakeRulesClient();
    const items = ruleItems(client.settings());
    expect(items.map((item) => (item.separator ? `-- ${item.label}` : item.label))).toEqual([
      '$(add) Add an allow rule…',
      '$(add) Add an ask rule…',
      '$(add) Add a deny rule…',
      '$(go-to-file) Open a settings file…',
      '-- Deny: never allowed, whatever else says so',
      'Read(./.env)',
      '-- Allow: run without asking',
      'Bash(git log:*)',
      'Bash(npm test)',
    ]);
    expect(items.find((item) => item.label === 'Read(./.env)')?.description).toBe('Project rules');
  });

  it('says so when there are no rules (the editor would hide an empty heading)', () => {
    const client = new FakeRulesClient();
    client.rules = [];
    expect(ruleItems(client.settings()).slice(4).map((item) => item.label)).toEqual(['Rules in force', 'No rules yet']);
  });

  it('says which rules cannot be removed from here', () => {
    expect(describeSource({ rule: 'Bash', behavior: 'allow', source: 'cli', file: null, line: null, column: null, warning: null })).toEqual({
      label: 'the command line',
      removable: undefined,
    });
    expect(describeSource({ rule: 'Bash', behavior: 'allow', source: 'settings', file: '/x.json', line: 1, column: 1, warning: null }).removable).toBeUndefined();
    expect(describeSource({ rule: 'Bash', behavior: 'allow', source: 'local', file: '/l.json', line: 1, column: 1, warning: null }).removable).toBe('local');
  });
});

describe('RulesView', () => {
  it('removes a picked rule through the sidecar, and shows the list again', async () => {
    const { view, notifier, client, seen } = setup();
    notifier.pickAnswers = ['Bash(git log:*)', '$(trash) Remove this rule', undefined];
    await view.show();
    expect(client.calls).toEqual(['get', 'remove allow Bash(git log:*) session', 'get']);
    expect(notifier.picks[2]?.labels).not.toContain('Bash(git log:*)');
    expect(seen.length).toBeGreaterThanOrEqual(2); // every answer also reaches the problems banner
  });

  it('offers no removal for a rule from the command line', async () => {
    const { view, notifier, client } = setup();
    notifier.pickAnswers = ['Bash(npm test)', undefined, undefined];
    await view.show();
    expect(notifier.picks[1]?.labels).toEqual(['$(arrow-left) Back to the rules']);
    expect(client.calls).toEqual(['get', 'get']);
  });

  it('opens the file of a rule at the place the sidecar gave for it', async () => {
    const { view, notifier, opened } = setup();
    notifier.pickAnswers = ['Read(./.env)', '$(go-to-file) Open its settings file'];
    await view.show();
    expect(opened).toEqual([{ path: PROJECT, line: 4, column: 12 }]);
  });

  it('adds a rule in the chosen scope; a refused rule comes back with the sidecar\'s reason', async () => {
    const { view, notifier, client } = setup();
    client.refusals = ["The rule 'Bash(npm run' was not changed: it is missing its closing parenthesis"];
    notifier.pickAnswers = [
      '$(add) Add a deny rule…',
      'This project, shared (.toolgate/settings.json)',
      'This project, shared (.toolgate/settings.json)',
      undefined,
    ];
    notifier.inputAnswers = ['Bash(npm run', 'Bash(npm run:*)'];
    await view.show();
    expect(client.calls).toEqual([
      'get',
      'add deny Bash(npm run project',
      'add deny Bash(npm run:*) project',
      'get',
    ]);
    expect(notifier.inputOptions[1]).toEqual({
      title: 'Add a deny rule',
      value: 'Bash(npm run',
      error: "The rule 'Bash(npm run' was not changed: it is missing its closing parenthesis",
    });
    expect(notifier.picks[3]?.labels).toContain('Bash(npm run:*)');
  });

  it('passes on the sidecar\'s warning about a rule that runs any code', async () => {
    const { view, notifier } = setup();
    notifier.pickAnswers = ['$(add) Add an allow rule…', 'This session only', undefined];
    notifier.inputAnswers = ['Bash(python:*)'];
    await view.show();
    expect(notifier.shown.map((shown) => [shown.level, shown.message])).toEqual([['warning', 'Bash(python:*) runs any code.']]);
  });

  it('lists problems, and picking one opens its file at the place the sidecar named', async () => {
    const { view, notifier, client, opened } = setup();
    // The sentence names a different path: only the structure decides what opens (nothing is parsed).
    const message = '/elsewhere.json:9:9: permissions.allow: Input should be a valid list';
    client.problems = [{ file: PROJECT, line: 3, column: 5, rule: null, message }];
    notifier.pickAnswers = [`$(warning) ${message}`];
    await view.show();
    expect(opened).toEqual([{ path: PROJECT, line: 3, column: 5 }]);
  });

  it('opens nothing for a problem that is in no file, and shows the list again', async () => {
    const { view, notifier, client, opened } = setup();
    client.problems = [{ file: null, line: null, column: null, rule: 'Bash(', message: 'cli: Bash( is not a valid rule' }];
    notifier.pickAnswers = ['$(warning) cli: Bash( is not a valid rule', undefined];
    await view.show();
    expect(opened).toEqual([]);
    expect(client.calls).toEqual(['get', 'get']);
  });

  it('falls back to the files when no sidecar can list the rules', async () => {
    const { view, fallbacks, client } = setup(null);
    await view.show();
    expect(fallbacks).toEqual([undefined]);
    expect(client.calls).toEqual([]);
  });

  it('opens a settings file from the list with the files the sidecar reported', async () => {
    const { view, notifier, fallbacks } = setup();
    notifier.pickAnswers = ['$(go-to-file) Open a settings file…'];
    await view.show();
    expect(fallbacks[0]).toMatchObject({ settingsFiles: { project: PROJECT }, flagFiles: [] });
  });
});

describe('the Permission Rules view (a tree)', () => {
  it('groups the rules as the engine consults them, each with where it comes from and what can be done on it', async () => {
    const client = new FakeRulesClient();
    client.problems = [{ file: PROJECT, line: 2, column: 5, rule: 'Bash(', message: "'Bash(' is not a valid rule" }];
    const tree = new RulesTree({ client, session: async () => 's1' });
    const changed: number[] = [];
    tree.onDidChange(() => changed.push(1));
    tree.shown();
    await settle();
    expect(changed).toEqual([1]);
    const roots = tree.roots();
    expect(roots.map((node) => [rulesNodeSpec(node).label, rulesNodeSpec(node).description])).toEqual([
      ['Not in force', '1'],
      ['Deny: never allowed', '1'],
      ['Allow: run without asking', '2'],
    ]);
    const allow = tree.children(roots[2] as RulesNode).map(rulesNodeSpec);
    expect(allow.map((spec) => [spec.label, spec.description, spec.contextValue])).toEqual([
      ['Bash(git log:*)', 'from this session only', 'rule removable'],
      ['Bash(npm test)', 'from the command line', 'rule'], // toolgate cannot change it from here
    ]);
    const [deny] = tree.children(roots[1] as RulesNode);
    expect(rulesNodeSpec(deny as RulesNode).contextValue).toBe('rule removable editable');
    expect(placeOf(deny)).toEqual({ file: PROJECT, line: 4, column: 12 });
    const [problem] = tree.children(roots[0] as RulesNode);
    expect(placeOf(problem)).toEqual({ file: PROJECT, line: 2, column: 5 });
    expect(ruleOf(problem)).toBeUndefined();
  });

  it('is empty (so its welcome shows) without rules, and says why when there is no sidecar', async () => {
    const client = new FakeRulesClient();
    client.rules = [];
    const tree = new RulesTree({ client, session: async () => 's1' });
    await tree.refresh();
    expect(tree.roots()).toEqual([]);
    const none = new RulesTree({ client, session: async () => undefined });
    await none.refresh();
    expect(rulesNodeSpec(none.roots()[0] as RulesNode).label).toContain('sidecar is not running');
  });

  it('follows the session only once it has been shown', async () => {
    const client = new FakeRulesClient();
    const tree = new RulesTree({ client, session: async () => 's1' });
    tree.sessionChanged();
    await settle();
    expect(client.calls).toEqual([]);
    tree.shown();
    tree.sessionChanged();
    await settle();
    expect(client.calls).toEqual(['get', 'get']);
  });

  it("removes a rule from the view's button, from the scope it is kept in, and shows the answer", async () => {
    const { view, client, seen } = setup();
    await view.remove(client.rules[1] as RuleEntry);
    expect(client.calls).toEqual(['remove allow Bash(git log:*) session']);
    expect(seen.at(-1)?.rules.map((entry) => entry.rule)).toEqual(['Read(./.env)', 'Bash(npm test)']);
    await view.remove(client.rules[1] as RuleEntry); // the command line's: nothing toolgate can change
    expect(client.calls).toHaveLength(1);
  });

  it("adds a rule from the view's Add: the kind, the rule, the scope", async () => {
    const { view, notifier, client } = setup();
    notifier.pickAnswers = ['$(add) Add an ask rule…', 'This project, shared (.toolgate/settings.json)'];
    notifier.inputAnswers = ['Bash(rm:*)'];
    await view.addRule();
    expect(notifier.picks[0]?.title).toBe('toolgate: Add a Permission Rule');
    expect(client.calls).toEqual(['add ask Bash(rm:*) project']);
  });
});
