import { beforeEach, describe, expect, it, vi } from 'vitest';

// The parts of `vscode` the language-feature wrapper uses, recorded (on top of the shared mock).
const state = vi.hoisted(() => ({
  executed: [] as unknown[][],
  events: [] as string[],
  typescriptActive: false,
}));

vi.mock('vscode', async (original) => {
  const base = (await original()) as Record<string, unknown>;
  class Position {
    constructor(
      readonly line: number,
      readonly character: number,
    ) {}
  }
  const typescript = {
    get isActive() {
      return state.typescriptActive;
    },
    packageJSON: { activationEvents: ['onLanguage:typescript'] },
    async activate() {
      state.events.push('typescript activated');
      state.typescriptActive = true;
    },
  };
  const markdown = { isActive: false, packageJSON: { activationEvents: ['onLanguage:markdown'] }, activate: vi.fn() };
  return {
    ...base,
    Position,
    workspace: {
      ...(base.workspace as object),
      openTextDocument: async (uri: { path: string }) => ({ uri, languageId: uri.path.endsWith('.ts') ? 'typescript' : 'plaintext' }),
    },
    extensions: { ...(base.extensions as object), all: [typescript, markdown] },
    commands: {
      executeCommand: async (...args: unknown[]) => {
        state.events.push(`executed ${String(args[0])}`);
        state.executed.push(args);
        return [];
      },
    },
  };
});

import { languageFeatures } from '../src/vscode/languageFeaturesVscode';

describe('languageFeatures over vscode', () => {
  beforeEach(() => {
    state.executed = [];
    state.events = [];
    state.typescriptActive = false;
  });

  it("starts the extensions that activate on the document's language before asking, and passes a Position", async () => {
    await languageFeatures.inDocument('vscode.executeReferenceProvider', '/ws/a.ts', { line: 3, character: 7 });
    expect(state.events).toEqual(['typescript activated', 'executed vscode.executeReferenceProvider']);
    const [command, uri, position] = state.executed[0] ?? [];
    expect(command).toBe('vscode.executeReferenceProvider');
    expect(uri).toMatchObject({ scheme: 'file', path: '/ws/a.ts' });
    expect(position).toMatchObject({ line: 3, character: 7 });
  });

  it('passes extra arguments after the position (a rename’s new name) and starts nothing already running', async () => {
    state.typescriptActive = true;
    await languageFeatures.inDocument('vscode.executeDocumentRenameProvider', '/ws/a.ts', { line: 0, character: 1 }, 'next');
    expect(state.events).toEqual(['executed vscode.executeDocumentRenameProvider']);
    expect(state.executed[0]?.[3]).toBe('next');
  });
});
