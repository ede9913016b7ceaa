import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { SettingsFileOpener } from '../src/settings/settingsFileOpener';
import type { SettingsFileOpenerDeps } from '../src/settings/settingsFileOpener';
import { EMPTY_RULES_FILE, bannerProblems, rulesFiles } from '../src/settings/permissionFiles';
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

function opener(
  opened: unknown[][],
  extra: Partial<SettingsFileOpenerDeps> = {},
): { run: SettingsFileOpener; notifier: FakeNotifier; shownLog: number[]; restarted: number[] } {
  const notifier = new FakeNotifier();
  const shownLog: number[] = [];
  const restarted: number[] = [];
  const deps = {
    notifier,
    currentSessionId: () => null,
    showLog: () => shownLog.push(1),
    restartSidecar: async () => {
      restarted.push(1);
    },
    vscode: {
      openFileOrDraft: async (...args: unknown[]) => {
        opened.push(args);
      },
    },
    ...extra,
  } as unknown as SettingsFileOpenerDeps;
  return { run: new SettingsFileOpener(deps), notifier, shownLog, restarted };
}

describe('SettingsFileOpener', () => {
  it('opens a settings file at the place the sidecar named, or at the top, or as a draft when it does not exist', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-rules-'));
    try {
      const file = path.join(dir, 'settings.json');
      fs.writeFileSync(file, '{\n  "permissions": {"allow": ["Bash(git log:*)"]}\n}\n');
      const opened: unknown[][] = [];
      const { run } = opener(opened);
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
    const { run, notifier } = opener(opened);
    notifier.pickAnswers = ['User rules (all your projects)'];
    await run.openRulesFile({ settingsFiles: FILES, flagFiles: [] });
    expect(notifier.picks[0]?.labels).toHaveLength(3);
    expect(opened).toEqual([[FILES.user, false, EMPTY_RULES_FILE]]);
  });

  it('asks the sidecar for the open session\'s files when none were given', async () => {
    const opened: unknown[][] = [];
    const client = { getSettings: async (sessionId: string) => ({ sessionId, settingsFiles: { user: FILES.user }, flagFiles: [] }) };
    const { run, notifier } = opener(opened, { currentSessionId: () => 's1', client } as unknown as Partial<SettingsFileOpenerDeps>);
    notifier.pickAnswers = ['User rules (all your projects)'];
    await run.openRulesFile();
    expect(opened).toEqual([[FILES.user, false, EMPTY_RULES_FILE]]);
  });

  it('says the sidecar is needed to list the files when there is none, and offers to restart it', async () => {
    const client = {
      getSettings: async () => {
        throw new Error('not running');
      },
    };
    const opened: unknown[][] = [];
    const { run, notifier, shownLog, restarted } = opener(opened, { currentSessionId: () => 's1', client });
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
});

describe('SettingsFileOpener.openMcpSettings', () => {
  it("opens the workspace's .mcp.json (a draft with an empty mcpServers when there is none) or the user file", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-mcp-'));
    try {
      const opened: unknown[][] = [];
      const user = path.join(dir, 'user-settings.json');
      fs.writeFileSync(user, '{}\n');
      const { run } = opener(opened, {
        currentSessionId: () => 's1',
        client: { getSettings: async () => ({ settingsFiles: { user }, flagFiles: [] }) } as never,
        vscode: {
          openFileOrDraft: async (...args: unknown[]) => {
            opened.push(args);
          },
          firstWorkspaceFolder: () => dir,
        },
      });
      await run.openMcpSettings('workspace');
      await run.openMcpSettings('user');
      const draft = '{\n  "mcpServers": {\n  }\n}\n';
      expect(opened).toEqual([
        [path.join(dir, '.mcp.json'), false, draft],
        [user, true, draft],
      ]);
      expect(JSON.parse(draft)).toEqual({ mcpServers: {} }); // a draft saved as it is is a valid settings file
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says the sidecar is needed to find the user file, with the ways forward', async () => {
    const { run, notifier, shownLog } = opener([]);
    const done = run.openMcpSettings('user');
    await settle();
    expect(notifier.shown[0]?.message).toContain('while the sidecar is not running');
    expect(notifier.shown[0]?.actions).toEqual(['Restart Sidecar', 'Show Log']);
    notifier.click('Show Log');
    await done;
    expect(shownLog).toEqual([1]);
  });
});
