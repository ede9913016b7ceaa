import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import type { ComposerEditor, EditorSelection, Manifest } from '../src/chat/composerHost';
import { ComposerHost } from '../src/chat/composerHost';
import type { EditorProblem } from '../src/protocol.generated';
import type { HostMessage } from '../src/shared/messages';
import { FakeNotifier, newStore } from './fakes';

const MANIFEST = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as {
  contributes: Manifest;
};

class FakeComposerEditor implements ComposerEditor {
  files = ['/w/src/app.ts', '/w/src/lib/util.ts', '/w/README.md'];
  problemList: EditorProblem[] = [];
  selection: EditorSelection | undefined;
  async workspaceFiles(): Promise<string[]> {
    return this.files;
  }
  async workspaceSymbols(query: string) {
    return [{ name: `${query}Thing`, kind: 'Function', container: '', path: '/w/src/app.ts', startLine: 3, endLine: 7 }];
  }
  problems(): EditorProblem[] {
    return this.problemList;
  }
  activeSelection(): EditorSelection | undefined {
    return this.selection;
  }
  workspaceRoot(): string {
    return '/w';
  }
}

function setup() {
  const editor = new FakeComposerEditor();
  const store = newStore();
  const notifier = new FakeNotifier();
  const posted: HostMessage[] = [];
  const ran: string[] = [];
  const selected: string[] = [];
  const client = {
    listModels: async (configured: readonly string[]) => ({ current: 'm1', models: ['m1', ...configured, 'm2'], problem: null }),
    selectModel: async (model: string) => {
      selected.push(model);
      return { model, message: `Chats use ${model} from the next message on.` };
    },
  };
  const command = (name: string) => async (argument: string) => void ran.push(`${name}:${argument}`);
  const host = new ComposerHost({
    editor,
    client,
    store,
    notifier,
    post: (message) => posted.push(message),
    configuredModels: () => ['from-settings'],
    manifest: MANIFEST.contributes,
    mac: false,
    commands: { compact: command('compact'), clear: command('clear'), rewind: command('rewind'), rules: command('rules'), mcp: command('mcp') },
    showChat: async () => void ran.push('showChat'),
  });
  return { host, editor, store, notifier, posted, ran, selected };
}

describe('the composer host', () => {
  it('offers problems, files, folders and symbols for @, best matches first', async () => {
    const { host, editor, posted } = setup();
    editor.problemList = [{ line: 0, character: 0, severity: 'error', source: 'ts', code: null, message: 'x' }];
    await host.viewMessage({ type: 'complete', requestId: 4, query: 'ap' });
    const [answer] = posted;
    expect(answer?.type).toBe('completions');
    if (answer?.type !== 'completions') return;
    expect(answer.requestId).toBe(4);
    expect(answer.items.map((item) => `${item.kind}:${item.label}`)).toEqual(['file:src/app.ts', 'symbol:apThing']);
    expect(answer.items[1]?.attachment).toEqual({ kind: 'selection', path: '/w/src/app.ts', startLine: 3, endLine: 7, label: 'apThing' });

    posted.length = 0;
    await host.viewMessage({ type: 'complete', requestId: 5, query: '' });
    const labels = posted[0]?.type === 'completions' ? posted[0].items.map((item) => item.label) : [];
    expect(labels).toEqual(['problems', 'src/app.ts', 'src/lib/util.ts', 'README.md', 'src/', 'src/lib/']);
  });

  it('offers the problems as a mention of the workspace, counting the errors and warnings the sidecar will list', async () => {
    const { host, editor, posted } = setup();
    const problem = (severity: EditorProblem['severity']): EditorProblem => ({ line: 0, character: 0, severity, message: severity });
    editor.problemList = [problem('warning'), problem('hint'), problem('error'), problem('information'), problem('warning')];
    await host.viewMessage({ type: 'complete', requestId: 1, query: 'prob' });
    const items = posted[0]?.type === 'completions' ? posted[0].items : [];
    // Only the mention is sent: the sidecar asks the editor for the problems when the message goes out.
    expect(items[0]).toEqual({ kind: 'problems', label: 'problems', detail: '3 in the workspace, 1 errors', chip: 'Problems (3)', attachment: { kind: 'problems' } });

    posted.length = 0;
    editor.problemList = [problem('hint')];
    await host.viewMessage({ type: 'complete', requestId: 2, query: 'prob' });
    const none = posted[0]?.type === 'completions' ? posted[0].items[0] : undefined;
    expect([none?.detail, none?.chip]).toEqual(['none right now', 'Problems (0)']);
  });

  it('attaches the selection with its lines, or the whole file when nothing is selected', async () => {
    const { host, editor, posted, ran } = setup();
    editor.selection = { path: '/w/src/app.ts', startLine: 2, endLine: 5, empty: false };
    await host.attachActive(true);
    expect(posted.pop()).toEqual({
      type: 'attach',
      chip: { attachment: { kind: 'selection', path: '/w/src/app.ts', startLine: 2, endLine: 5 }, chip: 'src/app.ts:2-5' },
    });
    expect(ran).toEqual(['showChat']);
    editor.selection = { path: '/w/src/app.ts', startLine: 2, endLine: 2, empty: true };
    await host.attachActive(true);
    expect(posted.pop()).toEqual({ type: 'attach', chip: { attachment: { kind: 'file', path: '/w/src/app.ts' }, chip: 'src/app.ts' } });
  });

  it('runs slash commands instead of sending them, and lets other text through', async () => {
    const { host, ran, selected, store } = setup();
    expect(await host.slashCommand('/clear')).toBe(true);
    expect(await host.slashCommand('/compact the API')).toBe(true);
    expect(await host.slashCommand('/model m2')).toBe(true);
    expect(await host.slashCommand('/tmp is full')).toBe(false);
    expect(ran).toEqual(['clear:', 'compact:the API']);
    expect(selected).toEqual(['m2']);
    expect(store.state.provider.model).toBe('m2');
  });

  it('/model without a name picks from the listed models', async () => {
    const { host, notifier, selected } = setup();
    notifier.pickAnswers = ['from-settings'];
    await host.slashCommand('/model');
    expect(notifier.picks[0]?.labels).toEqual(['m1', 'from-settings', 'm2']);
    expect(selected).toEqual(['from-settings']);
  });

  it('/help lists every slash command and every keybinding of the extension', async () => {
    const { host, store } = setup();
    await host.slashCommand('/help');
    const last = store.state.items.at(-1);
    const text = last?.kind === 'notice' ? last.text : '';
    for (const name of ['model', 'compact', 'clear', 'rewind', 'rules', 'mcp', 'help']) expect(text).toContain(`/${name}`);
    expect(MANIFEST.contributes.keybindings.length).toBeGreaterThan(3);
    for (const binding of MANIFEST.contributes.keybindings) expect(text).toContain(`${binding.key}: `);
    expect(text).toContain('ctrl+alt+l: Add Selection to Chat');
    for (const command of MANIFEST.contributes.commands) expect(text).toContain(`${command.category}: ${command.title}`);
  });
});
