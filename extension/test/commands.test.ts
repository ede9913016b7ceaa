import { describe, expect, it } from 'vitest';

import { Commands } from '../src/commands';
import type { CommandDeps, HostAction } from '../src/commands';
import type { SettingsProblem } from '../src/shared/chatModel';
import type { ViewMessage } from '../src/shared/messages';
import { FakeNotifier } from './fakes';

function setup(problems: SettingsProblem[] = []) {
  const executed: unknown[][] = [];
  const toController: ViewMessage[] = [];
  const opened: unknown[][] = [];
  const shown: string[] = [];
  const restarted: number[] = [];
  const deps = {
    notifier: new FakeNotifier(),
    vscode: {
      executeCommand: async (...args: unknown[]) => {
        executed.push(args);
      },
    },
    controller: {
      handle: async (message: ViewMessage) => {
        toController.push(message);
      },
    },
    manager: {
      restart: async () => {
        restarted.push(1);
      },
    },
    rules: {
      show: async () => {
        shown.push('rules');
      },
    },
    files: {
      openSettingsFile: async (...args: unknown[]) => {
        opened.push(args);
      },
    },
    showLog: () => shown.push('log'),
    settingsProblems: () => problems,
    chat: { focusComposer: () => shown.push('composer') },
  } as unknown as CommandDeps;
  return { commands: new Commands(deps), executed, toController, opened, shown, restarted };
}

describe('Commands', () => {
  it('runs the chat view\'s buttons for the host, and hands the rest to the chat controller', async () => {
    const { commands, executed, toController, shown, restarted } = setup();
    const host: ViewMessage[] = [
      { type: 'sidecarAction', action: 'restartSidecar' },
      { type: 'sidecarAction', action: 'showLog' },
      { type: 'openProviderSettings' },
      { type: 'openPermissionRules' },
    ];
    const chat: ViewMessage[] = [{ type: 'send', text: 'hi' }, { type: 'interrupt' }, { type: 'newSession' }];
    for (const message of [...host, ...chat]) await commands.viewMessage(message);
    expect(restarted).toEqual([1]);
    expect(shown).toEqual(['log', 'rules']);
    expect(executed).toEqual([['workbench.action.openSettings', '@ext:toolgate.toolgate']]);
    expect(toController).toEqual(chat);
  });

  it('answers the review of the diff editor by keybinding, then gives the keyboard back to the chat', async () => {
    const { commands, executed, shown } = setup();
    const answered: string[] = [];
    const deps = (commands as unknown as { deps: CommandDeps }).deps;
    Object.assign(deps, {
      reviews: { reviewFor: () => 'r1', accept: async (id: string) => void answered.push(`accept ${id}`) },
      vscode: { ...deps.vscode, activeEditorResource: () => ({ scheme: 'toolgate-proposed', path: '/r1-0/a.txt' }), resourceOf: () => undefined },
    });
    await commands.answerReview('accept', undefined);
    expect(answered).toEqual(['accept r1']);
    expect(executed).toEqual([['toolgate.chat.focus']]);
    expect(shown).toEqual(['composer']); // the composer too, not only the view's frame
  });

  it('opens the file of the settings problem clicked in the banner, at its place', async () => {
    const broken = { text: 'broken', file: '/ws/.toolgate/settings.json', line: 3, column: 14 };
    const { commands, opened, toController } = setup([{ text: 'in no file', file: null, line: null, column: null }, broken]);
    await commands.viewMessage({ type: 'openSettingsProblem', index: 1 });
    await commands.viewMessage({ type: 'openSettingsProblem', index: 0 }); // names no file: nothing to open
    await commands.viewMessage({ type: 'openSettingsProblem', index: 7 }); // no such problem
    expect(opened).toEqual([['/ws/.toolgate/settings.json', broken]]);
    expect(toController).toEqual([]);
  });

  it('opens toolgate\'s settings for "Open Model Settings"', async () => {
    const { commands, executed } = setup();
    const action: HostAction = 'openProviderSettings';
    await commands.sidecarAction(action);
    expect(executed).toEqual([['workbench.action.openSettings', '@ext:toolgate.toolgate']]);
  });
});
