/**
 * Which Python runs the sidecar, and whether it can.
 *
 * Order: the `toolgate.python.path` setting; else the interpreter selected in the Python extension, when that is
 * installed; else `python3` on PATH. The chosen interpreter is probed (one short subprocess): it must be 3.11 or
 * newer, and either able to import toolgate (when it runs the sidecar itself: toolgate.python.useInterpreterDirectly)
 * or able to create virtual environments (when it is the base of toolgate's own environment, pythonEnvSetup.ts).
 * Each failure comes with the sentence that explains it and the fixes to offer.
 */

import type { SidecarAction } from '../shared/chatModel';
import type { RunProcess } from './processes';

export const MINIMUM_PYTHON: readonly [number, number] = [3, 11];

export type PythonSource = 'setting' | 'pythonExtension' | 'default';

export interface PythonCandidate {
  command: string;
  source: PythonSource;
}

export interface PythonDiscovery {
  /** `toolgate.python.path`, already resolved (see settings.resolvePythonPath); empty when unset. */
  settingPath: string;
  /** The Python extension's selected interpreter; undefined when the extension is absent or has none. */
  pythonExtensionInterpreter: () => Promise<string | undefined>;
}

export async function choosePython(discovery: PythonDiscovery): Promise<PythonCandidate> {
  if (discovery.settingPath) return { command: discovery.settingPath, source: 'setting' };
  let fromExtension: string | undefined;
  try {
    fromExtension = await discovery.pythonExtensionInterpreter();
  } catch {
    fromExtension = undefined; // a broken Python extension must not keep toolgate from starting
  }
  if (fromExtension) return { command: fromExtension, source: 'pythonExtension' };
  return { command: 'python3', source: 'default' };
}

export interface PythonOk {
  ok: true;
  candidate: PythonCandidate;
  executable: string;
  version: string;
  toolgateVersion: string;
  /** toolgate's private environment the sidecar runs from; absent when it runs on the interpreter itself. */
  environment?: { python: string; dir: string };
  /** Something the person should know although the sidecar can start (a failed upgrade of the environment). */
  notice?: string;
}

export type PythonProblem = 'notFound' | 'tooOld' | 'noToolgate' | 'noVenv' | 'setupFailed' | 'broken';

export interface PythonFailure {
  ok: false;
  candidate: PythonCandidate;
  problem: PythonProblem;
  /** What is wrong, in one or two sentences. */
  message: string;
  /** What to do about it. */
  fix: string;
  actions: SidecarAction[];
  executable?: string;
}

export type PythonCheck = PythonOk | PythonFailure;

/**
 * Prints what we need to know as one JSON line. Written to run on any Python (even 2.7) so that an old interpreter
 * is reported as old rather than as broken.
 */
export const PROBE_SCRIPT = [
  'import json, sys',
  'info = {"executable": sys.executable, "version": list(sys.version_info[:3])}',
  'try:',
  '    import toolgate',
  '    info["toolgate"] = getattr(toolgate, "__version__", "unknown")',
  'except Exception as exc:',
  '    info["toolgate"] = None',
  '    info["importError"] = "%s: %s" % (type(exc).__name__, exc)',
  // Debian ships `venv` without `ensurepip` (that is python3-venv): then only `python3 -m venv --without-pip` works.
  'try:',
  '    import importlib.util as iu',
  '    info["venv"] = iu.find_spec("venv") is not None',
  '    info["ensurepip"] = iu.find_spec("ensurepip") is not None',
  'except Exception:',
  '    info["venv"] = info["ensurepip"] = False',
  'print(json.dumps(info))',
].join('\n');

function describe(candidate: PythonCandidate): string {
  switch (candidate.source) {
    case 'setting':
      return `the Python set in toolgate.python.path (${candidate.command})`;
    case 'pythonExtension':
      return `the Python selected in the Python extension (${candidate.command})`;
    case 'default':
      return `python3 on PATH`;
  }
}

export function installCommand(python: string, packageDir: string): string {
  return `${shellQuote(python)} -m pip install ${shellQuote(packageDir)}`;
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

export async function checkPython(
  candidate: PythonCandidate,
  run: RunProcess,
  options: {
    packageDir: string;
    cwd?: string;
    timeoutMs?: number;
    /** `base`: it builds toolgate's environment and needs `venv`, and `ensurepip` unless pip comes from the wheelhouse. */
    purpose?: 'sidecar' | 'base';
    needsEnsurepip?: boolean;
  },
): Promise<PythonCheck> {
  const where = describe(candidate);
  const chooseFix =
    'Set toolgate.python.path to a Python 3.11 or newer (or select one in the Python extension), then restart the sidecar.';
  const result = await run(candidate.command, ['-c', PROBE_SCRIPT], {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs ?? 20_000,
  });
  if (result.failure === 'notFound' || result.failure === 'notExecutable') {
    return {
      ok: false,
      candidate,
      problem: 'notFound',
      message:
        result.failure === 'notFound'
          ? `toolgate could not find ${where}.`
          : `toolgate cannot run ${where}: it is not an executable file.`,
      fix: chooseFix,
      actions: ['openPythonSetting', 'selectPython'],
    };
  }
  if (result.failure === 'timeout') {
    return {
      ok: false,
      candidate,
      problem: 'broken',
      message: `${capitalise(where)} did not answer within ${Math.round((options.timeoutMs ?? 20_000) / 1000)} s.`,
      fix: 'Check that this Python starts from a terminal, or choose another one in toolgate.python.path.',
      actions: ['openPythonSetting', 'restartSidecar'],
    };
  }
  const info = parseProbe(result.stdout);
  if (!info) {
    const detail = lastLine(result.stderr) || lastLine(result.stdout) || `exit status ${String(result.code)}`;
    return {
      ok: false,
      candidate,
      problem: 'broken',
      message: `${capitalise(where)} did not run toolgate's check (${detail}).`,
      fix: chooseFix,
      actions: ['openPythonSetting', 'selectPython', 'showLog'],
    };
  }
  const version = info.version.join('.');
  if (compareVersion(info.version, MINIMUM_PYTHON) < 0) {
    return {
      ok: false,
      candidate,
      problem: 'tooOld',
      executable: info.executable,
      message: `${capitalise(where)} is Python ${version}; toolgate needs Python ${MINIMUM_PYTHON.join('.')} or newer.`,
      fix: chooseFix,
      actions: ['openPythonSetting', 'selectPython'],
    };
  }
  if (options.purpose === 'base') {
    if (!info.venv || (options.needsEnsurepip !== false && !info.ensurepip)) {
      return {
        ok: false,
        candidate,
        problem: 'noVenv',
        executable: info.executable,
        message: `${capitalise(where)} (Python ${version}) cannot create virtual environments: its venv or ensurepip module is missing.`,
        fix: venvFix(version),
        actions: ['openPythonSetting', 'selectPython'],
      };
    }
    return { ok: true, candidate, executable: info.executable || candidate.command, version, toolgateVersion: '' };
  }
  if (info.toolgate === null) {
    const python = info.executable || candidate.command;
    return {
      ok: false,
      candidate,
      problem: 'noToolgate',
      executable: info.executable,
      message: `toolgate is not installed in ${where}${info.importError ? ` (${info.importError})` : ''}.`,
      fix: `Install it into that Python: ${installCommand(python, options.packageDir)} — or choose a Python that has it.`,
      actions: ['installToolgate', 'openPythonSetting', 'selectPython'],
    };
  }
  return { ok: true, candidate, executable: info.executable || candidate.command, version, toolgateVersion: info.toolgate };
}

/** The fix for a Python without a working venv module; on Debian and Ubuntu that module is a separate package. */
export function venvFix(version: string): string {
  const minor = /^(\d+\.\d+)/.exec(version)?.[1];
  const apt = minor ? `sudo apt install python${minor}-venv` : 'sudo apt install python3-venv';
  return (
    `On Debian and Ubuntu install it with: ${apt} — or choose another Python 3.11+ in toolgate.python.path. ` +
    'Then restart the sidecar.'
  );
}

interface ProbeInfo {
  executable: string;
  version: number[];
  toolgate: string | null;
  importError?: string;
  venv: boolean;
  ensurepip: boolean;
}

export function parseProbe(stdout: string): ProbeInfo | undefined {
  const line = lastLine(stdout);
  if (!line) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null) return undefined;
    const record = value as Record<string, unknown>;
    const version = record.version;
    if (!Array.isArray(version) || version.length < 2 || !version.every((n) => Number.isInteger(n))) return undefined;
    const toolgate = typeof record.toolgate === 'string' ? record.toolgate : null;
    return {
      executable: typeof record.executable === 'string' ? record.executable : '',
      version: version as number[],
      toolgate,
      importError: typeof record.importError === 'string' ? record.importError : undefined,
      venv: record.venv === true,
      ensurepip: record.ensurepip === true,
    };
  } catch {
    return undefined;
  }
}

export function compareVersion(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  return (lines[lines.length - 1] ?? '').trim();
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
