/**
 * The rule that keeps the extension's logic testable in plain Node: only the thin wrapper over the editor (the
 * modules in src/vscode/, and src/extension.ts, which wires them to the rest) loads `vscode` at run time. Every other
 * module may name its types (`import type`), which the bundler erases, but must not reach it through any chain of
 * run-time imports. vscode-languageclient loads `vscode` itself, so it counts as the editor too.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Module names that load the editor's API when imported. */
function isEditorModule(specifier: string): boolean {
  return /^vscode(-languageclient)?(\/|$)/.test(specifier);
}

/** May load the editor at run time: the wrapper itself, and the entry point that wires it in. */
function isWrapper(file: string): boolean {
  return file.startsWith('vscode/') || file === 'extension.ts';
}

function allTypeOnly(elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): boolean {
  return elements.length > 0 && elements.every((element) => element.isTypeOnly);
}

/** What a module imports at run time: imports and re-exports that are not type-only, `import()` and `require()`. */
export function runtimeImports(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly || (!clause.name && bindings !== undefined && ts.isNamedImports(bindings) && allTypeOnly(bindings.elements)));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const typeOnly = node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && allTypeOnly(clause.elements));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const reference = node.moduleReference.expression;
      if (!node.isTypeOnly && ts.isStringLiteral(reference)) found.push(reference.text);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const [argument] = node.arguments;
      const loads = node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require');
      if (loads && argument && ts.isStringLiteralLike(argument)) found.push(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/**
 * For each module outside the wrapper that loads the editor at run time, the chain of imports that does it.
 * `modules`: source text by path relative to src/ ('chat/controller.ts').
 */
export function editorLeaks(modules: ReadonlyMap<string, string>): string[] {
  const edges = new Map<string, string[]>();
  for (const [file, source] of modules) {
    const targets = runtimeImports(file, source).map((specifier) => {
      if (!specifier.startsWith('.')) return specifier;
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      return [`${resolved}.ts`, `${resolved}/index.ts`, resolved].find((candidate) => modules.has(candidate)) ?? resolved;
    });
    edges.set(file, targets);
  }
  const leaks: string[] = [];
  for (const start of modules.keys()) {
    if (isWrapper(start)) continue;
    // Breadth first, so the chain reported is a shortest one.
    const cameFrom = new Map<string, string>([[start, '']]);
    const queue = [start];
    for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
      const next = edges.get(current) ?? [];
      const editor = next.find(isEditorModule);
      if (editor !== undefined || isWrapper(current)) {
        const chain = editor === undefined ? [current] : [current, editor];
        for (let step = cameFrom.get(current); step; step = cameFrom.get(step)) chain.unshift(step);
        leaks.push(chain.join(' -> '));
        break;
      }
      for (const target of next) {
        if (!cameFrom.has(target) && edges.has(target)) {
          cameFrom.set(target, current);
          queue.push(target);
        }
      }
    }
  }
  return leaks;
}

function sourceModules(): Map<string, string> {
  const modules = new Map<string, string>();
  for (const entry of fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
    const file = entry.split(path.sep).join('/');
    if (file.endsWith('.ts')) modules.set(file, fs.readFileSync(path.join(SRC, entry), 'utf8'));
  }
  return modules;
}

describe('only the thin wrapper loads vscode at run time', () => {
  it('holds for every module in src/', () => {
    const modules = sourceModules();
    expect(modules.size).toBeGreaterThan(35); // the walk really saw the extension
    expect(editorLeaks(modules)).toEqual([]);
  });

  it('finds a planted run-time import of vscode, direct or through the wrapper, and lets type-only ones pass', () => {
    const modules = new Map([
      ['vscode/vscodeApi.ts', "import * as vscode from 'vscode';\nexport const x = vscode;"],
      ['extension.ts', "import * as api from './vscode/vscodeApi';"],
      ['chat/direct.ts', "import { window } from 'vscode';"],
      ['chat/viaWrapper.ts', "import { x } from '../vscode/vscodeApi';"],
      ['chat/viaClient.ts', "import { LanguageClient } from 'vscode-languageclient/node';"],
      ['chat/reexport.ts', "export { x } from './viaWrapper';"],
      ['chat/lazy.ts', "export const load = () => import('vscode');"],
      ['chat/typesOnly.ts', "import type * as vscode from 'vscode';\nimport { type Uri } from 'vscode';\nexport type { x } from '../vscode/vscodeApi';"],
      ['chat/fine.ts', "import type { x } from './viaWrapper';\nimport { y } from './typesOnly';"],
    ]);
    expect(editorLeaks(modules).sort()).toEqual([
      'chat/direct.ts -> vscode',
      'chat/lazy.ts -> vscode',
      'chat/reexport.ts -> chat/viaWrapper.ts -> vscode/vscodeApi.ts',
      'chat/viaClient.ts -> vscode-languageclient/node',
      'chat/viaWrapper.ts -> vscode/vscodeApi.ts',
    ]);
  });
});
