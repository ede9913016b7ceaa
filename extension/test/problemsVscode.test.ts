import { beforeEach, describe, expect, it, vi } from 'vitest';

// The parts of `vscode` the problems host uses to open a file, recorded (on top of the shared mock).
const state = vi.hoisted(() => ({ shown: [] as Array<{ document: unknown; options: unknown }> }));

vi.mock('vscode', async (original) => {
  const base = (await original()) as Record<string, unknown>;
  return {
    ...base,
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    workspace: {
      ...(base.workspace as object),
      textDocuments: [],
      openTextDocument: async (uri: { path: string }) => ({ uri, languageId: 'typescript' }),
    },
    window: {
      ...(base.window as object),
      tabGroups: { all: [] },
      showTextDocument: async (document: unknown, options: unknown) => {
        state.shown.push({ document, options });
      },
    },
  };
});

import { problemsHost } from '../src/vscode/problemsVscode';

describe('opening a file for its problems', () => {
  beforeEach(() => {
    state.shown = [];
  });

  it('shows a file that is in no tab in a preview tab that leaves the focus where it was', async () => {
    expect(await problemsHost().openDocument('/ws/a.ts', true)).toEqual({ languageId: 'typescript', wasOpen: false });
    expect(state.shown).toEqual([{ document: expect.objectContaining({ languageId: 'typescript' }), options: { preview: true, preserveFocus: true } }]);
  });

  it('with showInTab false (toolgate.problems.openFiles off), loads the file and opens no tab', async () => {
    expect(await problemsHost().openDocument('/ws/a.ts', false)).toEqual({ languageId: 'typescript', wasOpen: false });
    expect(state.shown).toEqual([]);
  });
});
