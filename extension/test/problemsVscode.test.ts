import { beforeEach, describe, expect, it, vi } from 'vitest';

// The parts of `vscode` the problems host uses to open a file, recorded (on top of the shared mock).
const state = vi.hoisted(() => ({
  shown: [] as Array<{ document: unknown; options: unknown }>,
  documents: [] as unknown[],
  tabs: [] as unknown[],
  executed: [] as unknown[][],
}));

vi.mock('vscode', async (original) => {
  const base = (await original()) as Record<string, unknown>;
  return {
    ...base,
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    workspace: {
      ...(base.workspace as object),
      get textDocuments() {
        return state.documents;
      },
      openTextDocument: async (uri: { path: string }) => ({ uri, languageId: 'typescript' }),
    },
    window: {
      ...(base.window as object),
      tabGroups: {
        get all() {
          return [{ tabs: state.tabs }];
        },
      },
      showTextDocument: async (document: unknown, options: unknown) => {
        state.shown.push({ document, options });
      },
    },
    commands: {
      executeCommand: async (...args: unknown[]) => {
        state.executed.push(args);
      },
    },
  };
});

import { TabInputText } from 'vscode';

import { problemsHost } from '../src/vscode/problemsVscode';

/** An open document as `vscode.workspace.textDocuments` lists it. */
function document(path: string, isDirty: boolean): { uri: { scheme: string; fsPath: string }; languageId: string; isDirty: boolean } {
  return { uri: { scheme: 'file', fsPath: path }, languageId: 'typescript', isDirty };
}

function tabOf(path: string): { input: TabInputText } {
  // The mock's TabInputText keeps no arguments: the uri the host reads is set on it here.
  return { input: Object.assign(new TabInputText(undefined as never), { uri: { fsPath: path } }) };
}

describe('opening a file for its problems', () => {
  beforeEach(() => {
    state.shown = [];
    state.documents = [];
    state.tabs = [];
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

describe('reloading a document from disk', () => {
  beforeEach(() => {
    state.documents = [];
    state.tabs = [];
    state.executed = [];
  });

  it('has VS Code set the editor of a clean document again (forceReload), where it is open, keeping the focus', async () => {
    const clean = document('/ws/a.ts', false);
    state.documents = [clean];
    state.tabs = [tabOf('/ws/a.ts')];
    await problemsHost().reloadDocument('/ws/a.ts', false);
    expect(state.executed).toEqual([
      [
        '_workbench.open',
        clean.uri,
        [-1, { preserveFocus: true, revealIfOpened: true, revealIfVisible: true, activation: 3, forceReload: true }],
      ],
    ]);
  });

  it('never reloads a dirty document (its unsaved edits would be lost)', async () => {
    state.documents = [document('/ws/a.ts', true)];
    state.tabs = [tabOf('/ws/a.ts')];
    await problemsHost().reloadDocument('/ws/a.ts', true);
    expect(state.executed).toEqual([]);
    expect(problemsHost().isDirty('/ws/a.ts')).toBe(true);
  });

  it('opens no tab for a document only loaded when toolgate.problems.openFiles is off', async () => {
    state.documents = [document('/ws/a.ts', false)];
    await problemsHost().reloadDocument('/ws/a.ts', false);
    expect(state.executed).toEqual([]);
    await problemsHost().reloadDocument('/ws/a.ts', true);
    expect(state.executed).toHaveLength(1);
  });
});
