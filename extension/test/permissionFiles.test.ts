import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { Commands } from '../src/commands';
import type { CommandDeps } from '../src/commands';
import { EMPTY_RULES_FILE, positionOf, settingsProblems } from '../src/permissionFiles';
import { FakeNotifier } from './fakes';

const FILES = {
  local: '/ws/.toolgate/settings.local.json',
  project: '/ws/.toolgate/settings.json',
  user: '/home/u/.config/toolgate/settings.json',
};

describe('settingsProblems', () => {
  it('finds the file and place a problem names, in the sidecar\'s own wording', () => {
    // Both sentences as toolgate's permission engine words them (engine.problems).
    const problems = settingsProblems(
      [
        '/ws/.toolgate/settings.json:3:14: permissions.allow: Input should be a valid list',
        "local (/ws/.toolgate/settings.local.json): 'Bash(' is not a valid rule: the '(' is not closed by a ')' at the very end of the rule",
        'PreToolUse hook matcher "Bash[" is not a valid pattern',
        '/etc/team/toolgate.json:1:1: Expecting value',
      ],
      FILES,
    );
    expect(problems.map(({ file, line, column }) => [file, line, column])).toEqual([
      ['/ws/.toolgate/settings.json', 3, 14],
      ['/ws/.toolgate/settings.local.json', null, null],
      [null, null, null],
      ['/etc/team/toolgate.json', 1, 1], // a --settings file: not among the scopes, found by its shape
    ]);
    expect(problems[0]?.text).toBe('/ws/.toolgate/settings.json:3:14: permissions.allow: Input should be a valid list');
  });

  it('prefers the longest reported path (settings.json is a prefix of settings.json.bak)', () => {
    const [problem] = settingsProblems(['/ws/a.json.d/x.json:2:1: broken'], { project: '/ws/a.json', flag: '/ws/a.json.d/x.json' });
    expect(problem?.file).toBe('/ws/a.json.d/x.json');
  });
});

describe('positionOf', () => {
  it('gives the 1-based line and column of the first occurrence', () => {
    const text = '{\n  "permissions": {\n    "deny": ["Read(./.env)"]\n  }\n}\n';
    expect(positionOf(text, '"Read(./.env)"')).toEqual({ line: 3, column: 14 });
    expect(positionOf(text, '"Bash"')).toBeUndefined();
    expect(positionOf(text, '')).toBeUndefined();
  });
});

function commands(opened: unknown[][], executed: unknown[][]): Commands {
  const deps = {
    notifier: new FakeNotifier(),
    vscode: {
      executeCommand: async (...args: unknown[]) => {
        executed.push(args);
      },
      openFileOrDraft: async (...args: unknown[]) => {
        opened.push(args);
      },
    },
  } as unknown as CommandDeps;
  return new Commands(deps);
}

describe('Commands: settings files and model settings', () => {
  it('opens a settings file at the problem\'s place, at a rule, or as a draft when it does not exist', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-rules-'));
    try {
      const file = path.join(dir, 'settings.json');
      fs.writeFileSync(file, '{\n  "permissions": {"allow": ["Bash(git log:*)"]}\n}\n');
      const opened: unknown[][] = [];
      const run = commands(opened, []);
      await run.openSettingsFile(file, { line: 3, column: 14 });
      await run.openSettingsFile(file, undefined, 'Bash(git log:*)');
      await run.openSettingsFile(path.join(dir, 'missing.json'));
      expect(opened).toEqual([
        [file, true, EMPTY_RULES_FILE, { line: 3, column: 14 }],
        [file, true, EMPTY_RULES_FILE, { line: 2, column: 29 }],
        [path.join(dir, 'missing.json'), false, EMPTY_RULES_FILE, undefined],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens toolgate\'s settings for "Open Model Settings"', async () => {
    const executed: unknown[][] = [];
    await commands([], executed).sidecarAction('openProviderSettings');
    expect(executed).toEqual([['workbench.action.openSettings', '@ext:toolgate.toolgate']]);
  });
});
