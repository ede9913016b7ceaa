import { describe, expect, it } from 'vitest';

import { COMMANDS, CodeIntelAnswers, type LanguageFeatures } from '../src/editor/codeIntel';
import type { IntelQueryParams } from '../src/protocol.generated';

const file = (path: string) => ({ scheme: 'file', path, fsPath: path });
const range = (line: number, start: number, end: number) => ({
  start: { line, character: start },
  end: { line, character: end },
});

/** VS Code's side, as the `vscode.execute*` commands answer: values by command, and every call recorded. */
function features(answers: Record<string, unknown>, samples = new Map<string, string>()) {
  const calls: unknown[][] = [];
  const respond = async (command: string, ...args: unknown[]) => {
    calls.push([command, ...args]);
    const value = answers[command];
    if (value instanceof Error) throw value;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown)(...args) : value;
  };
  const fake: LanguageFeatures = {
    inDocument: (command, path, position, ...extra) => respond(command, path, position, ...extra),
    run: (command, ...args) => respond(command, ...args),
    sampleFiles: async () => samples,
  };
  return { fake, calls };
}

function query(parts: Partial<IntelQueryParams>): IntelQueryParams {
  return { operation: 'definition', path: '/ws/a.ts', line: 2, character: 5, query: null, newName: null, ...parts };
}

describe('CodeIntelAnswers', () => {
  it('reads Locations and LocationLinks alike and leaves out documents that are not files', async () => {
    const { fake, calls } = features({
      [COMMANDS.definition]: [
        { uri: file('/ws/b.ts'), range: range(3, 16, 25) },
        { targetUri: file('/ws/c.ts'), targetRange: range(0, 0, 40), targetSelectionRange: range(0, 7, 12) },
        { uri: { scheme: 'untitled', path: 'Untitled-1' }, range: range(0, 0, 1) },
      ],
    });
    const answer = await new CodeIntelAnswers(fake).answer(query({}));
    expect(calls).toEqual([[COMMANDS.definition, '/ws/a.ts', { line: 2, character: 5 }]]);
    expect(answer.provided).toBe(true);
    expect(answer.locations).toEqual([
      { path: '/ws/b.ts', span: { startLine: 3, startCharacter: 16, endLine: 3, endCharacter: 25 } },
      { path: '/ws/c.ts', span: { startLine: 0, startCharacter: 7, endLine: 0, endCharacter: 12 } },
    ]);
  });

  it('says there is no provider when VS Code answers nothing at all', async () => {
    const { fake } = features({});
    expect((await new CodeIntelAnswers(fake).answer(query({ operation: 'references' }))).provided).toBe(false);
  });

  it('flattens a DocumentSymbol tree with depths and kinds', async () => {
    const { fake } = features({
      [COMMANDS.documentSymbols]: [
        {
          name: 'Shape',
          kind: 10,
          range: range(0, 0, 30),
          selectionRange: range(0, 17, 22),
          children: [{ name: 'area', kind: 5, range: range(1, 2, 17), selectionRange: range(1, 2, 6), children: [] }],
        },
      ],
    });
    const answer = await new CodeIntelAnswers(fake).answer(query({ operation: 'document_symbols', line: null, character: null }));
    expect(answer.locations?.map((l) => [l.name, l.kind, l.depth, l.span.startCharacter])).toEqual([
      ['Shape', 'Interface', 0, 17],
      ['area', 'Method', 1, 2],
    ]);
  });

  it('searches workspace symbols with the query and keeps their containers', async () => {
    const { fake, calls } = features({
      [COMMANDS.workspaceSymbols]: [
        { name: 'area', kind: 5, containerName: 'Shape', location: { uri: file('/ws/s.ts'), range: range(1, 2, 6) } },
      ],
    });
    const answer = await new CodeIntelAnswers(fake).answer(query({ operation: 'workspace_symbols', path: null, query: 'are' }));
    expect(calls).toEqual([[COMMANDS.workspaceSymbols, 'are']]);
    expect(answer.locations?.[0]).toMatchObject({ path: '/ws/s.ts', name: 'area', kind: 'Method', container: 'Shape' });
  });

  it('gives hover contents as text, code blocks fenced with their language', async () => {
    const { fake } = features({
      [COMMANDS.hover]: [{ contents: [{ value: '**doc**' }, { language: 'ts', value: 'let x: number' }, 'plain'] }],
    });
    const answer = await new CodeIntelAnswers(fake).answer(query({ operation: 'hover' }));
    expect(answer.hover).toEqual(['**doc**', '```ts\nlet x: number\n```', 'plain']);
  });

  it('asks for the callers of every prepared call hierarchy item', async () => {
    const item = { name: 'totalArea', kind: 11, uri: file('/ws/s.ts'), range: range(4, 0, 60), selectionRange: range(4, 16, 25) };
    const { fake, calls } = features({
      [COMMANDS.prepareCallHierarchy]: [item],
      [COMMANDS.incomingCalls]: [{ from: { ...item, name: 'main', uri: file('/ws/m.ts'), selectionRange: range(2, 9, 13) }, fromRanges: [] }],
    });
    const answer = await new CodeIntelAnswers(fake).answer(query({ operation: 'incoming_calls' }));
    expect(calls[1]).toEqual([COMMANDS.incomingCalls, item]);
    expect(answer.locations).toEqual([
      { path: '/ws/m.ts', span: { startLine: 2, startCharacter: 9, endLine: 2, endCharacter: 13 }, name: 'main', kind: 'Function' },
    ]);
  });

  it("turns a rename's WorkspaceEdit into edits per file, and a provider's refusal into its reason", async () => {
    const edit = {
      entries: () => [
        [file('/ws/a.ts'), [{ range: range(0, 9, 18), newText: 'sumOfAreas' }]],
        [file('/ws/b.ts'), [{ range: range(4, 16, 25), newText: 'sumOfAreas' }]],
      ],
    };
    const { fake, calls } = features({ [COMMANDS.rename]: edit });
    const answer = await new CodeIntelAnswers(fake).answer(query({ operation: 'rename', newName: 'sumOfAreas' }));
    expect(calls[0]).toEqual([COMMANDS.rename, '/ws/a.ts', { line: 2, character: 5 }, 'sumOfAreas']);
    expect(answer.edits?.map((f) => [f.path, f.edits[0]?.newText, f.edits[0]?.span.startCharacter])).toEqual([
      ['/ws/a.ts', 'sumOfAreas', 9],
      ['/ws/b.ts', 'sumOfAreas', 16],
    ]);
    const refusing = features({ [COMMANDS.rename]: new Error('You cannot rename this element.') });
    const refused = await new CodeIntelAnswers(refusing.fake).answer(query({ operation: 'rename', newName: 'x' }));
    expect(refused).toMatchObject({ provided: true, refused: 'You cannot rename this element.' });
  });

  it('reports the languages whose sample file has symbols', async () => {
    const samples = new Map([
      ['typescript', '/ws/a.ts'],
      ['plaintext', '/ws/notes.txt'],
    ]);
    const { fake } = features(
      { [COMMANDS.documentSymbols]: (path: unknown) => (path === '/ws/a.ts' ? [{ name: 'x', kind: 12, range: range(0, 0, 1) }] : undefined) },
      samples,
    );
    expect(await new CodeIntelAnswers(fake).languages()).toEqual({ languages: ['typescript'] });
  });
});
