import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { Commands } from '../src/commands';
import type { CommandDeps } from '../src/commands';
import { EMPTY_RULES_FILE, bannerProblems, rulesFiles } from '../src/permissionFiles';
import { FakeNotifier, settle } from './fakes';

const FILES = {
  local: '/ws/.toolgate/settings.local.json',
  project: '/ws/.toolgate/settings.json',
  user: '/home/u/.config/toolgate/settings.json',
};

describe('rulesFiles', () => {
  it('offers the files the sidecar reported, in scope order, then the --settings files', () => {
    expect(rulesFiles({ settingsFiles: FILES, flagFiles: ['/etc/team/toolgate.json'] })).toEqual([
      { label: 'Project rules (shared with the repository)', path: FILES.project },
      { label: 'Local project rules (just for you, not committed)', path: FILES.local },
      { label: 'User rules (all your projects)', path: FILES.user },
      { label: 'Settings file given with --settings', path: '/etc/team/toolgate.json' },
    ]);
  });

  it('offers only what was reported (no workspace: no project files)', () => {
    expect(rulesFiles({ settingsFiles: { user: FILES.user }, flagFiles: [] }).map((file) => file.path)).toEqual([FILES.user]);
  });
});

describe('bannerProblems', () => {
  it('takes the file and place from the sidecar, never from the sentence', () => {
    const problems = bannerProblems([
      { file: FILES.project, line: 3, column: 14, rule: null, message: '/somewhere/else.json:1:1: broken' },
      { file: null, line: null, column: null, rule: 'Bash(', message: `cli: 'Bash(' (${FILES.local}) is not a valid rule` },
    ]);
    expect(problems).toEqual([
      { text: '/somewhere/else.json:1:1: broken', file: FILES.project, line: 3, column: 14 },
      { text: `cli: 'Bash(' (${FILES.local}) is not a valid rule`, file: null, line: null, column: null },
    ]);
  });
});

function commands(
  opened: unknown[][],
  executed: unknown[][],
  extra: Partial<CommandDeps> = {},
): { run: Commands; notifier: FakeNotifier; shownLog: number[] } {
  const notifier = new FakeNotifier();
  const shownLog: number[] = [];
  const deps = {
    notifier,
    currentSessionId: () => null,
    showLog: () => shownLog.push(1),
    vscode: {
      executeCommand: async (...args: unknown[]) => {
        executed.push(args);
      },
      openFileOrDraft: async (...args: unknown[]) => {
        opened.push(args);
      },
    },
    ...extra,
  } as unknown as CommandDeps;
  return { run: new Commands(deps), notifier, shownLog };
}

describe('Commands: settings files and model settings', () => {
  it('opens a settings file at the place the sidecar named, or at the top, or as a draft when it does not exist', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-rules-'));
    try {
      const file = path.join(dir, 'settings.json');
      fs.writeFileSync(file, '{\n  "permissions": {"allow": ["Bash(git log:*)"]}\n}\n');
      const opened: unknown[][] = [];
      const { run } = commands(opened, []);
      await run.openSettingsFile(file, { line: 3, column: 14 });
      await run.openSettingsFile(file, { line: 2, column: null });
      await run.openSettingsFile(file, { line: null, column: null });
      await run.openSettingsFile(path.join(dir, 'missing.json'));
      expect(opened).toEqual([
        [file, true, EMPTY_RULES_FILE, { line: 3, column: 14 }],
        [file, true, EMPTY_RULES_FILE, { line: 2, column: 1 }],
        [file, true, EMPTY_RULES_FILE, undefined],
        [path.join(dir, 'missing.json'), false, EMPTY_RULES_FILE, undefined],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens the reported file picked from the list', async () => {
    const opened: unknown[][] = [];
    const { run, notifier } = commands(opened, []);
    notifier.pickAnswers = ['User rules (all your projects)'];
    await run.openRulesFile({ settingsFiles: FILES, flagFiles: [] });
    expect(notifier.picks[0]?.labels).toHaveLength(3);
    expect(opened).toEqual([[FILES.user, false, EMPTY_RULES_FILE]]);
  });

  it('asks the sidecar for the open session\'s files when none were given', async () => {
    const opened: unknown[][] = [];
    const client = { getSettings: async (sessionId: string) => ({ sessionId, settingsFiles: { user: FILES.user }, flagFiles: [] }) };
    const { run, notifier } = commands(opened, [], { currentSessionId: () => 's1', client } as unknown as Partial<CommandDeps>);
    notifier.pickAnswers = ['User rules (all your projects)'];
    await run.openRulesFile();
    expect(opened).toEqual([[FILES.user, false, EMPTY_RULES_FILE]]);
  });

  it('says the sidecar is needed to list the files when there is none, and offers to restart it', async () => {
    const restarted: number[] = [];
    const client = {
      getSettings: async () => {
        throw new Error('not running');
      },
    };
    const manager = { restart: async () => restarted.push(1) };
    const opened: unknown[][] = [];
    const { run, notifier, shownLog } = commands(opened, [], {
      currentSessionId: () => 's1',
      client,
      manager,
    } as unknown as Partial<CommandDeps>);
    const done = run.openRulesFile();
    await settle();
    expect(notifier.shown.map((shown) => [shown.level, shown.actions])).toEqual([['warning', ['Restart Sidecar', 'Show Log']]]);
    expect(notifier.shown[0]?.message).toContain('while the sidecar is not running');
    notifier.click('Restart Sidecar');
    await done;
    expect(restarted).toEqual([1]);
    expect(shownLog).toEqual([]);
    expect(notifier.picks).toEqual([]);
    expect(opened).toEqual([]);
  });

  it('opens toolgate\'s settings for "Open Model Settings"', async () => {
    const executed: unknown[][] = [];
    await commands([], executed).run.sidecarAction('openProviderSettings');
    expect(executed).toEqual([['workbench.action.openSettings', '@ext:toolgate.toolgate']]);
  });
});
