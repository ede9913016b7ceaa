// Builds toolgate-<version>.vsix at the repository root: production bundles, plus the sidecar's Python package
// source under python/ (so `pip install <extension dir>/python` installs toolgate into any Python 3.11+).
// usage: node scripts/package.mjs [--out FILE]
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const extensionDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(extensionDir, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
const outFlag = process.argv.indexOf('--out');
const out = outFlag > 0 ? path.resolve(process.argv[outFlag + 1]) : path.join(repoRoot, `toolgate-${manifest.version}.vsix`);

// The extension and the sidecar are released together: refuse to package mismatched versions.
const pythonVersion = /__version__ = "([^"]+)"/.exec(
  fs.readFileSync(path.join(repoRoot, 'server', 'toolgate', '__init__.py'), 'utf8'),
)?.[1];
if (pythonVersion !== manifest.version) {
  console.error(`package: extension version ${manifest.version} differs from toolgate.__version__ ${pythonVersion}`);
  process.exit(1);
}

const staging = path.join(extensionDir, 'python');
fs.rmSync(staging, { recursive: true, force: true });
fs.mkdirSync(path.join(staging, 'server'), { recursive: true });
fs.cpSync(path.join(repoRoot, 'server', 'toolgate'), path.join(staging, 'server', 'toolgate'), {
  recursive: true,
  filter: (source) => !source.includes('__pycache__') && !source.endsWith('.pyc'),
});
for (const file of ['pyproject.toml', 'README.md', 'LICENSE']) {
  fs.copyFileSync(path.join(repoRoot, file), path.join(staging, file));
}
fs.copyFileSync(path.join(repoRoot, 'LICENSE'), path.join(extensionDir, 'LICENSE'));

const node = process.execPath;
const bin = (name) => path.join(repoRoot, 'node_modules', name);
execFileSync(node, [path.join(extensionDir, 'esbuild.mjs'), '--production'], { cwd: extensionDir, stdio: 'inherit' });
// vsce lists every packaged file; keep that for failures and say only what was built otherwise.
const listing = execFileSync(
  node,
  [bin('@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', out],
  { cwd: extensionDir, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
);
const done = listing.split('\n').find((line) => line.includes('Packaged:'));
console.log(`package: ${done ? done.replace(/^.*Packaged:\s*/, '') : out}`);
