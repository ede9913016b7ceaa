/**
 * `LanguageFeatures` over VS Code: the `vscode.execute*Provider` commands, which answer from the open buffers (and
 * open a document that is not open, without showing it).
 */

import * as vscode from 'vscode';

import type { LanguageFeatures } from '../editor/codeIntel';

// One file per language is probed; code files only (a language server per kind of source file).
const SAMPLE_GLOB = '**/*.{ts,tsx,js,jsx,mjs,cjs,py,go,rs,java,kt,c,h,cc,cpp,hpp,cs,rb,php,swift,scala,lua,dart}';
const SAMPLE_EXCLUDE = '**/{node_modules,.git,.venv,venv,dist,build,target,out}/**';
const MAX_SAMPLED_FILES = 200;

/**
 * Open the document (without showing it) and wait for the extensions that start on its language. A question about a
 * file nobody has opened would otherwise reach VS Code before its language server registered, and get "nothing".
 */
async function languageReady(uri: vscode.Uri): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  const event = `onLanguage:${document.languageId}`;
  const starting = vscode.extensions.all.filter(
    (extension) => !extension.isActive && ((extension.packageJSON as { activationEvents?: string[] }).activationEvents ?? []).includes(event),
  );
  await Promise.all(starting.map((extension) => extension.activate()));
}

export const languageFeatures: LanguageFeatures = {
  async inDocument(command, path, position, ...extra) {
    const uri = vscode.Uri.file(path);
    await languageReady(uri);
    const args: unknown[] = position ? [uri, new vscode.Position(position.line, position.character), ...extra] : [uri];
    return vscode.commands.executeCommand(command, ...args);
  },
  async run(command, ...args) {
    return vscode.commands.executeCommand(command, ...args);
  },
  async sampleFiles() {
    const samples = new Map<string, string>();
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme === 'file' && !samples.has(document.languageId)) samples.set(document.languageId, document.uri.fsPath);
    }
    const seenExtensions = new Set<string>();
    for (const uri of await vscode.workspace.findFiles(SAMPLE_GLOB, SAMPLE_EXCLUDE, MAX_SAMPLED_FILES)) {
      const extension = uri.path.slice(uri.path.lastIndexOf('.'));
      if (seenExtensions.has(extension)) continue;
      seenExtensions.add(extension);
      const document = await vscode.workspace.openTextDocument(uri);
      if (!samples.has(document.languageId)) samples.set(document.languageId, uri.fsPath);
    }
    return samples;
  },
};
