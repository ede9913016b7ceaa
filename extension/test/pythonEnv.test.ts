import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { runProcess } from '../src/python/processes';
import type { PythonOk } from '../src/python/python';
import type { EnvStamp } from '../src/python/pythonEnv';
import {
  diagnose,
  envPython,
  leftovers,
  newEnvDirName,
  outputSummary,
  parsePointer,
  planEnvironment,
  sameStamp,
  STAMP_FILE,
} from '../src/python/pythonEnv';
import type { EnvSetupDeps } from '../src/python/pythonEnvSetup';
import { NOTIFICATION_TITLE, SETUP_TITLE, SidecarPython } from '../src/python/pythonEnvSidecar';
import { ensureEnvironment, readPointer, setupEnvironment, wheelhouse } from '../src/python/pythonEnvSetup';

const repoRoot = path.resolve(__dirname, '..', '..');
// The project's own virtualenv (`make setup`): a real Python that imports toolgate, behind the stand-ins below.
const venvPython = path.join(repoRoot, '.venv', 'bin', 'python');

const stamp: EnvStamp = { extensionVersion: '0.1.0', baseExecutable: '/usr/bin/python3.11', baseVersion: '3.11.2', packages: 'index' };

describe('the version stamp', () => {
  it('is the same only when every part is', () => {
    expect(sameStamp(stamp, { ...stamp })).toBe(true);
    for (const change of [
      { extensionVersion: '0.2.0' },
      { baseExecutable: '/usr/local/bin/python3.12' },
      { baseVersion: '3.11.9' },
      { packages: 'wheelhouse:abc' },
    ]) {
      expect(sameStamp(stamp, { ...stamp, ...change })).toBe(false);
    }
  });

  it('names a new directory for every build, even of the same stamp', () => {
    const first = newEnvDirName(stamp, 1000);
    expect(first).toMatch(/^env-0\.1\.0-[0-9a-f]{10}-/);
    expect(newEnvDirName(stamp, 2000)).not.toBe(first);
  });

  it('reads only a pointer to a plain directory name', () => {
    expect(parsePointer(JSON.stringify({ dir: 'env-a', stamp }))).toEqual({ dir: 'env-a', stamp });
    expect(parsePointer(JSON.stringify({ dir: '../elsewhere', stamp }))).toBeUndefined();
    expect(parsePointer(JSON.stringify({ dir: 'env-a/../../x', stamp }))).toBeUndefined();
    expect(parsePointer(JSON.stringify({ dir: 'env-a', stamp: { extensionVersion: 1 } }))).toBeUndefined();
    expect(parsePointer('{not json')).toBeUndefined();
    expect(parsePointer(undefined)).toBeUndefined();
  });
});

describe('planEnvironment', () => {
  const current = { dir: 'env-a', stamp };
  it('reuses the environment in use when it fits and runs', () => {
    expect(planEnvironment(current, stamp, { force: false, currentUsable: true })).toEqual({ kind: 'reuse', dir: 'env-a' });
  });
  it('builds when there is none, when it changed, when it is broken, or when asked to', () => {
    expect(planEnvironment(undefined, stamp, { force: false, currentUsable: false }).kind).toBe('build');
    expect(planEnvironment(current, { ...stamp, extensionVersion: '0.2.0' }, { force: false, currentUsable: true })).toEqual({
      kind: 'build',
      previous: current,
    });
    expect(planEnvironment(current, stamp, { force: false, currentUsable: false }).kind).toBe('build');
    expect(planEnvironment(current, stamp, { force: true, currentUsable: true }).kind).toBe('build');
  });
  it('cleans up everything but the new and the previous environment', () => {
    expect(leftovers(['env-a', 'env-b', 'env-c', 'current.json', 'other'], 'env-c', 'env-b')).toEqual(['env-a']);
  });
});

describe('diagnose', () => {
  it('names the apt package for a Python without ensurepip (Debian)', () => {
    const debian =
      'The virtual environment was not created successfully because ensurepip is not\navailable.  On Debian/Ubuntu ' +
      'systems, you need to install the python3-venv\npackage using the following command.\n\n    apt install python3.11-venv';
    expect(diagnose(debian, { version: '3.11.2' })).toMatchObject({
      problem: 'noVenv',
      fix: expect.stringContaining('sudo apt install python3.11-venv'),
    });
  });
  it('recognises a full disk and a missing index', () => {
    expect(diagnose('OSError: [Errno 28] No space left on device', { version: '3.12.1' }).problem).toBe('noSpace');
    expect(diagnose('ERROR: No matching distribution found for pydantic', { version: '3.12.1' }).problem).toBe('offline');
    expect(diagnose('Segmentation fault', { version: '3.12.1' }).problem).toBe('other');
  });
});

describe('outputSummary', () => {
  it("gives pip's error line, or the first sentence of a message wrapped over lines", () => {
    expect(outputSummary('Looking in links: /w\nERROR: No matching distribution found for pydantic\nexit status 1')).toBe(
      'ERROR: No matching distribution found for pydantic',
    );
    const debian =
      'The virtual environment was not created successfully because ensurepip is not\navailable.  On Debian/Ubuntu ' +
      'systems, you need to install the python3-venv\npackage.\nexit status 1';
    expect(outputSummary(debian)).toBe(
      'The virtual environment was not created successfully because ensurepip is not available.',
    );
    expect(outputSummary('x'.repeat(400))).toHaveLength(300);
  });
});

describe('setupEnvironment', () => {
  it("drops the variables that would change what pip installs, and keeps the index's", () => {
    const env = setupEnvironment(
      { PATH: '/bin', PYTHONPATH: '/x', PIP_CONSTRAINT: '/c.txt', PIP_USER: '1', PIP_INDEX_URL: 'http://mirror/' },
      true,
    );
    expect(env).toMatchObject({ PATH: '/bin', PIP_INDEX_URL: 'http://mirror/', PIP_CONFIG_FILE: os.devNull });
    expect(env.PYTHONPATH).toBeUndefined();
    expect(env.PIP_CONSTRAINT).toBeUndefined();
    expect(env.PIP_USER).toBeUndefined();
    expect(setupEnvironment({}, false).PIP_CONFIG_FILE).toBeUndefined(); // the index install keeps the user's pip setup
  });
});

describe('ensureEnvironment (real processes, stand-in interpreters)', () => {
  let scratch: string;
  let root: string;
  let packageDir: string;
  let calls: string;
  let clock = 1_000_000;
  const lines: string[] = [];
  const steps: string[] = [];

  /**
   * A base Python whose `-m venv DIR` makes DIR/bin/python: a stand-in whose `-m pip` succeeds and which runs
   * everything else (the probe) on the project's Python. A file `fail-venv` beside it makes `-m venv` fail.
   */
  function baseInterpreter(): PythonOk {
    const base = path.join(scratch, 'python3');
    // `-m pip …` or `…/pip-*.whl/pip …` (pip from the wheelhouse) succeeds; anything else runs on the project's Python.
    const inner =
      `#!/bin/sh\necho "env $*" >> '${calls}'\ncase "$1" in -m|*.whl/pip) exit 0;; esac\n` +
      `exec '${venvPython}' "$@"\n`;
    fs.writeFileSync(
      base,
      [
        '#!/bin/sh',
        `echo "base $*" >> '${calls}'`,
        // The probe (python.ts): a Python 3.11.2 that can create virtual environments.
        `[ "$1" = -c ] && echo '{"executable": "${base}", "version": [3, 11, 2], "toolgate": "0.1.0", "venv": true, "ensurepip": true}' && exit 0`,
        `if [ -e '${scratch}/fail-venv' ]; then echo "Error: ensurepip is not available" >&2; exit 1; fi`,
        'for dir; do :; done', // the last argument: `-m venv [--without-pip] DIR`
        'mkdir -p "$dir/bin"',
        `cat > "$dir/bin/python" <<'EOF'\n${inner}EOF`,
        'chmod +x "$dir/bin/python"',
      ].join('\n'),
      { mode: 0o755 },
    );
    return { ok: true, candidate: { command: base, source: 'setting' }, executable: base, version: '3.11.2', toolgateVersion: '' };
  }

  function deps(extensionVersion = '0.1.0'): EnvSetupDeps {
    return {
      run: runProcess,
      root,
      packageDir,
      extensionVersion,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      log: (line) => lines.push(line),
      progress: (step) => steps.push(step),
      now: () => (clock += 1000),
    };
  }

  const callLog = (): string[] => (fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').trim().split('\n') : []);
  const envDirs = (): string[] => fs.readdirSync(root).filter((name) => name.startsWith('env-')).sort();

  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-env-test-'));
    root = path.join(scratch, 'global-storage', 'python-env');
    packageDir = path.join(scratch, 'extension', 'python');
    fs.mkdirSync(path.join(packageDir, 'wheelhouse'), { recursive: true });
    fs.writeFileSync(path.join(packageDir, 'wheelhouse', 'toolgate-0.1.0-py3-none-any.whl'), '');
    fs.writeFileSync(path.join(packageDir, 'wheelhouse', 'manifest.json'), JSON.stringify({ digest: 'd1' }));
    calls = path.join(scratch, 'calls.log');
    lines.length = 0;
    steps.length = 0;
  });

  afterEach(() => {
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('builds from the wheelhouse without an index, then reuses the environment', async () => {
    const base = baseInterpreter();
    const first = await ensureEnvironment(base, deps(), false);
    expect(first).toMatchObject({ ok: true, executable: base.executable, toolgateVersion: expect.stringMatching(/^\d/) });
    if (!first.ok) return;
    const dir = envDirs()[0] ?? '';
    expect(first.environment).toEqual({ dir: path.join(root, dir), python: envPython(path.join(root, dir)) });
    expect(readPointer(root)).toMatchObject({ dir, stamp: { packages: 'wheelhouse:d1', baseVersion: '3.11.2' } });
    expect(fs.existsSync(path.join(root, dir, STAMP_FILE))).toBe(true);
    const install = callLog().find((line) => line.startsWith('env -m pip install'));
    expect(install).toContain(`--no-index --find-links ${path.join(packageDir, 'wheelhouse')} toolgate`);
    expect(steps[0]).toMatch(/^Creating the virtual environment/);

    fs.rmSync(calls);
    steps.length = 0;
    const again = await ensureEnvironment(base, deps(), false);
    expect(again).toMatchObject({ ok: true, environment: first.environment });
    expect(callLog().some((line) => line.startsWith('base -m venv'))).toBe(false);
    expect(steps).toEqual([]); // nothing to show when nothing is built
  });

  it("runs pip from the wheelhouse's pip wheel, so the environment needs no ensurepip", async () => {
    const pipWheel = path.join(packageDir, 'wheelhouse', 'pip-26.0-py3-none-any.whl');
    fs.writeFileSync(pipWheel, '');
    expect(wheelhouse(packageDir)?.pipWheel).toBe(pipWheel);
    const result = await ensureEnvironment(baseInterpreter(), deps(), false);
    expect(result.ok).toBe(true);
    expect(callLog().find((line) => line.startsWith('base -m venv'))).toMatch(/^base -m venv --without-pip /);
    expect(callLog().find((line) => line.includes(' install '))).toMatch(
      new RegExp(`^env ${pipWheel}/pip install .* --no-index --find-links`),
    );
  });

  it('falls back to the package index when the vsix has no wheelhouse, and says so', async () => {
    fs.rmSync(path.join(packageDir, 'wheelhouse'), { recursive: true });
    expect(wheelhouse(packageDir)).toBeUndefined();
    const result = await ensureEnvironment(baseInterpreter(), deps(), false);
    expect(result.ok).toBe(true);
    expect(callLog().find((line) => line.startsWith('env -m pip install'))).toMatch(new RegExp(`install .* ${packageDir}$`));
    expect(lines.join('\n')).toContain('packages from the package index: this .vsix carries no wheelhouse');
    expect(steps).toContain('Installing toolgate and its dependencies from the package index…');
  });

  it('switches to a new directory for a new version, keeping the previous one and removing older ones', async () => {
    const base = baseInterpreter();
    await ensureEnvironment(base, deps('0.1.0'), false);
    const [v1] = envDirs();
    await ensureEnvironment(base, deps('0.2.0'), false);
    const pointer = readPointer(root);
    expect(pointer?.stamp.extensionVersion).toBe('0.2.0');
    expect(pointer?.dir).not.toBe(v1);
    expect(envDirs()).toEqual([v1, pointer?.dir].sort());
    await ensureEnvironment(base, deps('0.3.0'), false);
    expect(envDirs()).not.toContain(v1);
    expect(envDirs()).toHaveLength(2);
  });

  it('rebuilds into a new directory when forced', async () => {
    const base = baseInterpreter();
    await ensureEnvironment(base, deps(), false);
    const before = readPointer(root)?.dir;
    const rebuilt = await ensureEnvironment(base, deps(), true);
    expect(rebuilt.ok).toBe(true);
    expect(readPointer(root)?.dir).not.toBe(before);
  });

  it('leaves the old environment in use when an upgrade fails, and removes the half-built one', async () => {
    const base = baseInterpreter();
    const old = await ensureEnvironment(base, deps('0.1.0'), false);
    const pointerBefore = fs.readFileSync(path.join(root, 'current.json'), 'utf8');
    fs.writeFileSync(path.join(scratch, 'fail-venv'), '');
    const upgraded = await ensureEnvironment(base, deps('0.2.0'), false);
    expect(upgraded).toMatchObject({ ok: true, environment: old.ok ? old.environment : undefined });
    expect(upgraded.ok && upgraded.notice).toMatch(
      /^Setting up toolgate's Python environment failed while creating the virtual environment: .* The sidecar runs on the previous environment/,
    );
    expect(fs.readFileSync(path.join(root, 'current.json'), 'utf8')).toBe(pointerBefore);
    expect(envDirs()).toHaveLength(1);
  });

  it('fails with the step and the fix when there is no environment to fall back on', async () => {
    fs.writeFileSync(path.join(scratch, 'fail-venv'), '');
    const result = await ensureEnvironment(baseInterpreter(), deps(), false);
    expect(result).toMatchObject({
      ok: false,
      problem: 'setupFailed',
      message: expect.stringContaining('failed while creating the virtual environment: Error: ensurepip is not available. The sidecar log'),
      fix: expect.stringContaining('sudo apt install python3.11-venv'),
      actions: expect.arrayContaining(['showLog']),
    });
    expect(envDirs()).toEqual([]);
    expect(readPointer(root)).toBeUndefined();
  });

  describe('SidecarPython', () => {
    function sidecarPython(direct: boolean, shown: string[]): SidecarPython {
      const base = baseInterpreter();
      const { run, ...env } = deps();
      return new SidecarPython({
        discovery: () => ({ settingPath: base.candidate.command, pythonExtensionInterpreter: async () => undefined }),
        useInterpreterDirectly: () => direct,
        run,
        extensionPath: scratch,
        env,
        ui: {
          begin: (title) => {
            shown.push(`begin ${title}`);
            return { report: (step) => shown.push(step), done: () => shown.push('done') };
          },
        },
      });
    }

    it('runs the sidecar on its own environment, showing the setup only while it is built', async () => {
      const shown: string[] = [];
      const python = sidecarPython(false, shown);
      const status: string[] = [];
      const first = await python.check((step) => status.push(step));
      expect(first).toMatchObject({ ok: true, environment: { python: expect.stringContaining(root) } });
      expect(shown[0]).toBe(`begin ${NOTIFICATION_TITLE}`);
      expect(shown[shown.length - 1]).toBe('done');
      expect(status[0]).toBe(SETUP_TITLE);
      shown.length = 0;
      expect(await python.check()).toMatchObject({ ok: true, environment: first.ok ? first.environment : undefined });
      expect(shown).toEqual([]);
      python.rebuildNext();
      const rebuilt = await python.check();
      expect(rebuilt.ok && rebuilt.environment?.dir).not.toBe(first.ok && first.environment?.dir);
    });

    it('uses the chosen interpreter itself with useInterpreterDirectly', async () => {
      const shown: string[] = [];
      const check = await sidecarPython(true, shown).check();
      expect(check).toMatchObject({ ok: true, candidate: { source: 'setting' } });
      expect(check.ok && check.environment).toBeUndefined();
      expect(shown).toEqual([]);
      expect(fs.existsSync(root)).toBe(false);
    });
  });
});
