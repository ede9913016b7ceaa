// Builds toolgate-<version>.vsix at the repository root: production bundles, plus the sidecar's Python package
// source under python/ and, for a platform package, python/wheelhouse/: toolgate and every dependency as wheels for
// that platform and each supported Python, so the extension builds its environment offline (pythonEnvSetup.ts).
// usage: node scripts/package.mjs [--target TARGET] [--python PYTHON] [--out FILE]
//   TARGET: a vsce target (linux-x64, linux-arm64, alpine-x64, darwin-x64, darwin-arm64, win32-x64), `host` (the
//   default: this machine's), or `universal` (no wheelhouse: the extension installs from the package index).
//   PYTHON: the Python whose pip downloads the wheels (default: the project's .venv, else python3).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const extensionDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(extensionDir, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : fallback;
};
const out = path.resolve(option('--out', path.join(repoRoot, `toolgate-${manifest.version}.vsix`)));
fs.mkdirSync(path.dirname(out), { recursive: true });

// The Pythons the wheelhouse serves (toolgate needs 3.11+): Debian 12 has 3.11, Ubuntu 24.04 3.12, Debian 13 3.13.
const PYTHONS = ['3.11', '3.12', '3.13', '3.14'];
// pip's platform tags per vsce target. pip does not widen a tag to older compatible ones, so each is listed; a
// wheel tagged for a newer OS than the oldest one supported (macOS 11, glibc 2.17) is left out on purpose.
const PLATFORMS = {
  'linux-x64': ['manylinux_2_28_x86_64', 'manylinux_2_27_x86_64', 'manylinux_2_17_x86_64', 'manylinux2014_x86_64'],
  'linux-arm64': ['manylinux_2_28_aarch64', 'manylinux_2_27_aarch64', 'manylinux_2_17_aarch64', 'manylinux2014_aarch64'],
  'alpine-x64': ['musllinux_1_2_x86_64', 'musllinux_1_1_x86_64'],
  'darwin-x64': ['macosx_10_9_x86_64', 'macosx_10_12_x86_64', 'macosx_10_13_x86_64', 'macosx_10_15_x86_64', 'macosx_11_0_x86_64', 'macosx_10_9_universal2'],
  'darwin-arm64': ['macosx_11_0_arm64', 'macosx_10_9_universal2', 'macosx_10_12_universal2'],
  'win32-x64': ['win_amd64'],
};
const hostTarget = () => {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  const platform = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform];
  const name = `${platform}-${arch}`;
  if (!(name in PLATFORMS)) {
    console.error(`package: no wheelhouse for this machine (${process.platform}-${process.arch}); use --target universal`);
    process.exit(1);
  }
  return name;
};
const requested = option('--target', 'host');
const target = requested === 'host' ? hostTarget() : requested;
if (target !== 'universal' && !(target in PLATFORMS)) {
  console.error(`package: unknown target ${target}; one of host, universal, ${Object.keys(PLATFORMS).join(', ')}`);
  process.exit(1);
}
const venvPython = path.join(repoRoot, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');
const python = option('--python', fs.existsSync(venvPython) ? venvPython : 'python3');

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
if (target !== 'universal') buildWheelhouse(path.join(staging, 'wheelhouse'));

/** toolgate's wheel, plus every dependency's for `target` and each Python in PYTHONS, and a manifest with a digest. */
function buildWheelhouse(wheelhouse) {
  const started = Date.now();
  fs.mkdirSync(wheelhouse, { recursive: true });
  const pip = (args) =>
    execFileSync(python, ['-m', 'pip', '--disable-pip-version-check', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  // Built from a copy: setuptools writes build/ and *.egg-info next to the source, which must not reach the .vsix.
  const source = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-wheel-'));
  try {
    fs.cpSync(staging, source, { recursive: true, filter: (file) => !file.startsWith(wheelhouse) });
    pip(['wheel', '--quiet', '--no-deps', '--wheel-dir', wheelhouse, source]);
  } finally {
    fs.rmSync(source, { recursive: true, force: true });
  }
  const wheel = fs.readdirSync(wheelhouse).find((name) => name.startsWith(`toolgate-${manifest.version}-`));
  const platforms = PLATFORMS[target].flatMap((tag) => ['--platform', tag]);
  for (const version of PYTHONS) {
    pip(['download', '--quiet', '--only-binary=:all:', ...platforms, '--implementation', 'cp', '--python-version', version,
      '--dest', wheelhouse, path.join(wheelhouse, wheel)]);
  }
  // pip itself: the extension runs it from its wheel, so the environment needs no ensurepip (pythonEnvSetup.ts).
  pip(['download', '--quiet', '--only-binary=:all:', '--no-deps', '--dest', wheelhouse, 'pip']);
  const files = fs.readdirSync(wheelhouse).filter((name) => name.endsWith('.whl')).sort();
  const digest = createHash('sha256');
  for (const name of files) digest.update(`${name}\0`).update(fs.readFileSync(path.join(wheelhouse, name)));
  fs.writeFileSync(
    path.join(wheelhouse, 'manifest.json'),
    `${JSON.stringify({ target, pythons: PYTHONS, digest: digest.digest('hex'), wheels: files }, null, 2)}\n`,
  );
  const bytes = files.reduce((sum, name) => sum + fs.statSync(path.join(wheelhouse, name)).size, 0);
  console.log(`package: wheelhouse for ${target}, Python ${PYTHONS.join('/')}: ${files.length} wheels, ` +
    `${(bytes / 1024 / 1024).toFixed(1)} MB, in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const node = process.execPath;
const bin = (name) => path.join(repoRoot, 'node_modules', name);
execFileSync(node, [path.join(extensionDir, 'esbuild.mjs'), '--production'], { cwd: extensionDir, stdio: 'inherit' });
// vsce lists every packaged file; keep that for failures and say only what was built otherwise.
const listing = execFileSync(
  node,
  [
    bin('@vscode/vsce/vsce'),
    'package',
    ...(target === 'universal' ? [] : ['--target', target]),
    ...['--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', out],
  ],
  { cwd: extensionDir, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
);
const done = listing.split('\n').find((line) => line.includes('Packaged:'));
console.log(`package: ${done ? done.replace(/^.*Packaged:\s*/, '') : out} (${target})`);
