import { beforeEach, describe, expect, it, vi } from 'vitest';

// The parts of `vscode` that opening a settings file uses, recorded (on top of the shared mock).
const state = vi.hoisted(() => ({
  executed: [] as unknown[][],
  shown: [] as Array<{ target: unknown; options: unknown }>,
  internalCommand: true,
}));

vi.mock('vscode', async (original) => {
  const base = (await original()) as Record<string, unknown>;
  class Position {
    constructor(
      readonly line: number,
      readonly character: number,
    ) {}
  }
  class Range {
    constructor(
      readonly start: Position,
      readonly end: Position,
    ) {}
  }
  return {
    ...base,
    Position,
    Range,
    window: {
      ...(base.window as object),
      showTextDocument: async (target: unknown, options: unknown) => {
        state.shown.push({ target, options });
      },
    },
    commands: {
      executeCommand: async (...args: unknown[]) => {
        if (!state.internalCommand) throw new Error("command '_workbench.open' not found");
        state.executed.push(args);
      },
    },
  };
});

import { openFileOrDraft } from '../src/vscode/vscodeApi';

describe('opening an existing settings file at a place', () => {
  beforeEach(() => {
    state.executed = [];
    state.shown = [];
    state.internalCommand = true;
  });

  it('has VS Code read it from disk again, then puts the cursor at the place (1-based, as the sidecar names it)', async () => {
    await openFileOrDraft('/ws/.toolgate/settings.json', true, '{}', { line: 3, column: 14 });
    expect(state.executed).toEqual([
      [
        '_workbench.open',
        expect.objectContaining({ scheme: 'file', path: '/ws/.toolgate/settings.json' }),
        [-1, { pinned: true, selection: { startLineNumber: 3, startColumn: 14 }, forceReload: true }],
      ],
    ]);
    expect(state.shown).toEqual([]);
  });

  it('without a place, reads it again and leaves the cursor where VS Code keeps it', async () => {
    await openFileOrDraft('/ws/.toolgate/settings.json', true, '{}');
    expect(state.executed).toEqual([['_workbench.open', expect.anything(), [-1, { pinned: true, forceReload: true }]]]);
  });

  it('in a VS Code without the internal command, opens it the public way at the same place', async () => {
    state.internalCommand = false;
    await openFileOrDraft('/ws/.toolgate/settings.json', true, '{}', { line: 3, column: 14 });
    expect(state.shown).toEqual([
      {
        target: expect.objectContaining({ path: '/ws/.toolgate/settings.json' }),
        options: { preview: false, selection: { start: { line: 2, character: 13 }, end: { line: 2, character: 13 } } },
      },
    ]);
  });
});
