import type * as vscode from 'vscode';
import { describe, expect, it } from 'vitest';

import { ProposalStore } from '../src/review/proposals';
import { notifier, registerProposalFileSystem, resourceOf, uriOf } from '../src/vscode/vscodeApi';
import { SidecarOutput } from '../src/vscode/vscodeOutput';
import * as mock from './vscodeMock';

function provider(store: ProposalStore): vscode.FileSystemProvider {
  registerProposalFileSystem(store);
  const entry = mock.registered[mock.registered.length - 1];
  expect(entry?.scheme).toBe(store.scheme);
  return entry?.provider as vscode.FileSystemProvider;
}

const uri = (scheme: string, path: string) => mock.Uri.from({ scheme, path }) as unknown as vscode.Uri;
const bytes = (text: string) => new TextEncoder().encode(text);

describe('the review file systems, as the editor sees them', () => {
  it('names a review file by its own path, the review id in the authority (not in the breadcrumbs)', () => {
    const editorUri = uriOf({ scheme: 'toolgate-proposed', path: '/r1-0/ws/src/a.py' });
    expect(editorUri).toMatchObject({ scheme: 'toolgate-proposed', authority: 'r1-0', path: '/ws/src/a.py' });
    expect(resourceOf(editorUri)).toEqual({ scheme: 'toolgate-proposed', path: '/r1-0/ws/src/a.py' });
    expect(uriOf({ scheme: 'file', path: '/ws/src/a.py' })).toMatchObject({ authority: '', path: '/ws/src/a.py' });
  });

  it('serves proposals, accepts saves of them, and refuses to create, delete or rename', () => {
    const store = new ProposalStore('toolgate-proposed', false);
    store.put('/r1-0/ws/a.py', 'old');
    const fs = provider(store);
    const file = uri('toolgate-proposed', '/r1-0/ws/a.py');
    expect(new TextDecoder().decode(fs.readFile(file) as Uint8Array)).toBe('old');
    expect(fs.stat(file)).toMatchObject({ type: mock.FileType.File, size: 3, permissions: undefined });
    expect(fs.stat(uri('toolgate-proposed', '/r1-0/ws'))).toMatchObject({ type: mock.FileType.Directory });
    expect(fs.readDirectory(uri('toolgate-proposed', '/r1-0'))).toEqual([['ws', mock.FileType.Directory]]);

    const changes: unknown[] = [];
    fs.onDidChangeFile((events) => changes.push(...events));
    const edited = uriOf({ scheme: 'toolgate-proposed', path: '/r1-0/ws/a.py' });
    fs.writeFile(edited, bytes('new'), { create: true, overwrite: true });
    expect(store.text('/r1-0/ws/a.py')).toBe('new');
    expect(changes).toEqual([{ uri: edited, type: mock.FileChangeType.Changed }]);

    const other = uri('toolgate-proposed', '/r1-0/ws/b.py');
    expect(() => fs.writeFile(other, bytes('x'), { create: true, overwrite: true })).toThrow(
      expect.objectContaining({ code: 'NoPermissions' }),
    );
    expect(() => fs.readFile(other)).toThrow(expect.objectContaining({ code: 'FileNotFound' }));
    expect(() => fs.delete(file, { recursive: false })).toThrow(expect.objectContaining({ code: 'NoPermissions' }));
    expect(() => fs.rename(file, other, { overwrite: false })).toThrow(expect.objectContaining({ code: 'NoPermissions' }));
  });

  it('marks originals read-only, and refuses writes to them', () => {
    const store = new ProposalStore('toolgate-original', true);
    store.put('/r1-0/ws/a.py', 'original');
    const fs = provider(store);
    expect(mock.registered[mock.registered.length - 1]?.options).toMatchObject({ isReadonly: true });
    const file = uri('toolgate-original', '/r1-0/ws/a.py');
    expect(fs.stat(file)).toMatchObject({ permissions: mock.FilePermission.Readonly });
    expect(() => fs.writeFile(file, bytes('x'), { create: false, overwrite: true })).toThrow(
      expect.objectContaining({ code: 'NoPermissions' }),
    );
    expect(store.text('/r1-0/ws/a.py')).toBe('original');
  });
});

describe('SidecarOutput', () => {
  it('passes everything to the channel and keeps the last lines of stderr for error reports', () => {
    const written: string[] = [];
    const channel = {
      name: 'toolgate',
      append: (value: string) => written.push(value),
      appendLine: (value: string) => written.push(`${value}\n`),
      note: undefined,
    } as unknown as vscode.OutputChannel;
    const output = new SidecarOutput(channel, 2);
    output.append('Traceback (most recent call last):\n  File "x"');
    output.append(', line 1\n');
    output.appendLine('[Error] the client says something'); // the language client's own message: not stderr
    output.note('[extension] starting');
    output.append('ValueError: bad\n');
    output.append('partial');
    expect(written.join('')).toBe(
      'Traceback (most recent call last):\n  File "x", line 1\n[Error] the client says something\n[extension] starting\nValueError: bad\npartial',
    );
    expect(output.recent()).toBe('  File "x", line 1\nValueError: bad\npartial');
    output.forgetRecent();
    expect(output.recent()).toBe('');
  });
});

describe('notifier (quick picks and input boxes)', () => {
  it('shows headings as separators and returns the item that was picked', async () => {
    const items = [
      { label: 'Add a rule…', id: 'add' },
      { label: 'Allow', separator: true, id: 'heading' },
      { label: 'Bash(ls)', id: 'rule' },
    ];
    mock.window.pickIndex = 2;
    const picked = await notifier.pick(items, { title: 'Rules' });
    expect(picked).toBe(items[2]); // the caller's own object, not the editor's copy
    expect(mock.window.lastPick).toMatchObject([
      { label: 'Add a rule…' },
      { label: 'Allow', kind: mock.QuickPickItemKind.Separator },
      { label: 'Bash(ls)' },
    ]);
    expect((mock.window.lastPick?.[0] as { kind?: unknown }).kind).toBeUndefined();
    mock.window.pickIndex = undefined;
    expect(await notifier.pick(items, { title: 'Rules' })).toBeUndefined();
  });

  it('shows the reason of a refusal under the refused text, until it is changed, and answers what was accepted', async () => {
    const answer = notifier.input({ title: 'Add a rule', prompt: 'p', value: 'Bash(ls', error: 'not closed' });
    const box = mock.window.lastInputBox;
    if (!box) throw new Error('no input box');
    const refusal = { message: 'not closed', severity: mock.InputBoxValidationSeverity.Warning };
    expect(box).toMatchObject({ shown: true, title: 'Add a rule', value: 'Bash(ls', validationMessage: refusal });
    box.type('Bash(ls)');
    expect(box.validationMessage).toBeUndefined();
    box.type('Bash(ls');
    expect(box.validationMessage).toEqual(refusal);
    box.type('Bash(ls:*)');
    box.accept();
    await expect(answer).resolves.toBe('Bash(ls:*)');
    expect(box.disposed).toBe(true);
  });

  it('answers undefined when the input box is closed without accepting', async () => {
    const answer = notifier.input({ title: 'Key', prompt: 'p', password: true });
    const box = mock.window.lastInputBox;
    expect(box).toMatchObject({ password: true, value: '', validationMessage: undefined });
    box?.hide();
    await expect(answer).resolves.toBeUndefined();
  });
});
