import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runProcess } from '../src/python/processes';
import { checkPython, choosePython, compareVersion, parseProbe } from '../src/python/python';

// The project's own virtualenv (made by `make setup`): a real Python 3.11 with toolgate installed.
const repoRoot = path.resolve(__dirname, '..', '..');
const venvPython = path.join(repoRoot, '.venv', 'bin', 'python');
const packageDir = '/opt/toolgate/python';
let scratch: string;

/** A stand-in interpreter: a shell script that behaves as described. */
function script(name: string, body: string): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-python-test-'));
});

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('choosePython', () => {
  it('prefers the setting, then the Python extension, then python3', async () => {
    const fromExtension = async () => '/ext/python';
    expect(await choosePython({ settingPath: '/set/python', pythonExtensionInterpreter: fromExtension })).toEqual({
      command: '/set/python',
      source: 'setting',
    });
    expect(await choosePython({ settingPath: '', pythonExtensionInterpreter: fromExtension })).toEqual({
      command: '/ext/python',
      source: 'pythonExtension',
    });
    expect(await choosePython({ settingPath: '', pythonExtensionInterpreter: async () => undefined })).toEqual({
      command: 'python3',
      source: 'default',
    });
  });

  it('falls back to python3 when the Python extension fails', async () => {
    const broken = async (): Promise<string> => {
      throw new Error('extension host crashed');
    };
    expect(await choosePython({ settingPath: '', pythonExtensionInterpreter: broken })).toMatchObject({ source: 'default' });
  });
});

describe('checkPython (real processes)', () => {
  it('accepts a Python 3.11+ that imports toolgate', async () => {
    const check = await checkPython({ command: venvPython, source: 'setting' }, runProcess, { packageDir });
    expect(check).toMatchObject({ ok: true, toolgateVersion: expect.stringMatching(/^\d+\.\d+/) });
    if (check.ok) expect(compareVersion(check.version.split('.').map(Number), [3, 11])).toBeGreaterThanOrEqual(0);
  });

  it('says a missing interpreter is missing, and where it was looked for', async () => {
    const check = await checkPython({ command: path.join(scratch, 'nope'), source: 'setting' }, runProcess, { packageDir });
    expect(check).toMatchObject({ ok: false, problem: 'notFound' });
    if (!check.ok) {
      expect(check.message).toContain('toolgate.python.path');
      expect(check.actions).toContain('openPythonSetting');
    }
  });

  it('refuses a Python older than 3.11', async () => {
    const old = script('python3.9', `echo '{"executable": "/usr/bin/python3.9", "version": [3, 9, 2], "toolgate": null}'`);
    const check = await checkPython({ command: old, source: 'pythonExtension' }, runProcess, { packageDir });
    expect(check).toMatchObject({ ok: false, problem: 'tooOld' });
    if (!check.ok) expect(check.message).toContain('is Python 3.9.2; toolgate needs Python 3.11 or newer');
  });

  it('offers the pip command when toolgate is not importable', async () => {
    // The real interpreter with site-packages turned off (-S) cannot import the installed toolgate.
    const bare = script('python-no-site', `exec "${venvPython}" -S "$@"`);
    const check = await checkPython({ command: bare, source: 'setting' }, runProcess, { packageDir });
    expect(check).toMatchObject({ ok: false, problem: 'noToolgate' });
    if (!check.ok) {
      expect(check.message).toContain("ModuleNotFoundError: No module named 'toolgate'");
      expect(check.fix).toContain(`-m pip install ${packageDir}`);
      expect(check.actions[0]).toBe('installToolgate');
    }
  });

  it('accepts a base Python without toolgate when it can create virtual environments', async () => {
    const bare = script('python-base', `exec "${venvPython}" -S "$@"`);
    const check = await checkPython({ command: bare, source: 'setting' }, runProcess, { packageDir, purpose: 'base' });
    expect(check).toMatchObject({ ok: true, toolgateVersion: '' });
  });

  it('names the apt package for a base Python without ensurepip', async () => {
    // Debian's python3 without python3-venv: `venv` is there, `ensurepip` is not.
    const noEnsurepip = script(
      'python-no-ensurepip',
      `exec "${venvPython}" -c 'import sys; sys.modules["ensurepip"] = None; exec(sys.argv[1])' "$2"`,
    );
    const check = await checkPython({ command: noEnsurepip, source: 'default' }, runProcess, { packageDir, purpose: 'base' });
    expect(check).toMatchObject({ ok: false, problem: 'noVenv' });
    if (!check.ok) {
      expect(check.message).toContain('cannot create virtual environments');
      expect(check.fix).toMatch(/sudo apt install python3\.\d+-venv/);
    }
    // With pip in the wheelhouse, `venv --without-pip` is all it takes.
    const withWheelPip = await checkPython({ command: noEnsurepip, source: 'default' }, runProcess, {
      packageDir,
      purpose: 'base',
      needsEnsurepip: false,
    });
    expect(withWheelPip.ok).toBe(true);
  });

  it('reports an interpreter that fails with its last words', async () => {
    const broken = script('python-broken', 'echo "Fatal Python error: init_fs_encoding" >&2; exit 1');
    const check = await checkPython({ command: broken, source: 'setting' }, runProcess, { packageDir });
    expect(check).toMatchObject({ ok: false, problem: 'broken' });
    if (!check.ok) expect(check.message).toContain('Fatal Python error: init_fs_encoding');
  });

  it('gives up on an interpreter that hangs', async () => {
    // exec: the shell becomes the sleeping process, so the kill on timeout leaves nothing behind.
    const hanging = script('python-hangs', 'exec sleep 30');
    const started = Date.now();
    const check = await checkPython({ command: hanging, source: 'setting' }, runProcess, { packageDir, timeoutMs: 300 });
    expect(check).toMatchObject({ ok: false, problem: 'broken' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('parseProbe', () => {
  it('reads the last JSON line and rejects anything else', () => {
    expect(parseProbe('noise\n{"executable": "/p", "version": [3, 12, 1], "toolgate": "0.1.0", "venv": true}\n')).toEqual({
      executable: '/p',
      version: [3, 12, 1],
      toolgate: '0.1.0',
      importError: undefined,
      venv: true,
      ensurepip: false,
    });
    expect(parseProbe('Python 3.12.1')).toBeUndefined();
    expect(parseProbe('{"version": "3.12"}')).toBeUndefined();
  });
});
