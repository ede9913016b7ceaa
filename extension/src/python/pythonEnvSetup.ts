/**
 * Builds and finds toolgate's private Python environment (the decisions are in pythonEnv.ts).
 *
 * From a checked base interpreter: reuse the environment in use when its stamp still fits and its Python still
 * runs toolgate; otherwise build a new one in a new directory — `python -m venv`, then pip from the wheelhouse the
 * .vsix carries (`--no-index`: nothing is downloaded) or, for a .vsix without one, from the package index — check it,
 * and only then point `current.json` at it. A failed build is deleted and the previous environment, when there is
 * one, stays in use. The user's interpreters are only ever read.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { RunProcess, RunResult } from './processes';
import type { PythonCheck, PythonOk } from './python';
import { checkPython } from './python';
import type { CurrentPointer, EnvStamp, SetupStep } from './pythonEnv';
import {
  POINTER_FILE,
  STAMP_FILE,
  STEP_TITLES,
  diagnose,
  envPython,
  leftovers,
  newEnvDirName,
  outputSummary,
  parsePointer,
  planEnvironment,
} from './pythonEnv';

export interface EnvSetupDeps {
  run: RunProcess;
  /** The directory that holds the environments (in the extension's global storage). */
  root: string;
  /** The extension's `python/` folder: toolgate's source, and `wheelhouse/` in a platform .vsix. */
  packageDir: string;
  extensionVersion: string;
  /** The editor's environment; pip's and Python's own variables are filtered from it. */
  env: NodeJS.ProcessEnv;
  /** A line for the sidecar log (commands and their full output). */
  log(line: string): void;
  /** A build step starts (only when something is built: a reused environment reports nothing). */
  progress(step: string): void;
  now(): number;
}

/** Free space below which a build is not started: the environment takes about 180 MB. */
export const MIN_FREE_BYTES = 300 * 1024 * 1024;

const TIMEOUTS_MS: Record<'venv' | 'install' | 'verify', number> = { venv: 180_000, install: 900_000, verify: 60_000 };

export interface Wheelhouse {
  dir: string;
  /** Changes whenever the wheels do. */
  digest: string;
  /** pip's own wheel: it installs from the wheelhouse, so the environment needs no pip (nor the base `ensurepip`). */
  pipWheel?: string;
}

/** The wheelhouse in this .vsix; undefined without one. */
export function wheelhouse(packageDir: string): Wheelhouse | undefined {
  const dir = path.join(packageDir, 'wheelhouse');
  try {
    const wheels = fs.readdirSync(dir).filter((name) => name.endsWith('.whl'));
    if (!wheels.some((name) => name.startsWith('toolgate-'))) return undefined;
    const manifest = fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8');
    const digest = (JSON.parse(manifest) as { digest?: unknown }).digest;
    const pip = wheels.find((name) => /^pip-[^-]+-py3-none-any\.whl$/.test(name));
    return {
      dir,
      digest: typeof digest === 'string' ? digest : wheels.sort().join(','),
      pipWheel: pip ? path.join(dir, pip) : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * The environment for pip and venv: no PYTHONPATH/PYTHONHOME (they would mix another installation into the
 * build), and none of pip's settings that change what gets installed or where. Index and network settings stay, so
 * that a proxy or a private index keeps working for the index install.
 */
export function setupEnvironment(base: NodeJS.ProcessEnv, offline: boolean): Record<string, string> {
  const keep = new Set([
    'PIP_INDEX_URL',
    'PIP_EXTRA_INDEX_URL',
    'PIP_NO_INDEX',
    'PIP_TRUSTED_HOST',
    'PIP_CERT',
    'PIP_CLIENT_CERT',
    'PIP_PROXY',
    'PIP_DEFAULT_TIMEOUT',
    'PIP_RETRIES',
  ]);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (name === 'PYTHONPATH' || name === 'PYTHONHOME' || name === 'VIRTUAL_ENV') continue;
    if (name.startsWith('PIP_') && !keep.has(name)) continue;
    env[name] = value;
  }
  // From the wheelhouse no configuration file (a constraints file, a --user default) may change the result.
  if (offline) env.PIP_CONFIG_FILE = os.devNull;
  env.PIP_DISABLE_PIP_VERSION_CHECK = '1';
  env.PIP_NO_INPUT = '1';
  env.PYTHONIOENCODING = 'utf-8';
  return env;
}

export async function ensureEnvironment(base: PythonOk, deps: EnvSetupDeps, force: boolean): Promise<PythonCheck> {
  const wheels = wheelhouse(deps.packageDir);
  const wanted: EnvStamp = {
    extensionVersion: deps.extensionVersion,
    baseExecutable: base.executable,
    baseVersion: base.version,
    packages: wheels ? `wheelhouse:${wheels.digest}` : 'index',
  };
  const current = readPointer(deps.root);
  const currentCheck = current ? await verify(base, path.join(deps.root, current.dir), deps) : undefined;
  const plan = planEnvironment(current, wanted, { force, currentUsable: currentCheck?.ok === true });
  if (plan.kind === 'reuse' && currentCheck?.ok) return currentCheck;

  const built = await build(base, wanted, wheels, deps);
  if (built.ok) return built;
  // A failed upgrade leaves the environment that worked before in use.
  if (currentCheck?.ok) {
    return {
      ...currentCheck,
      notice:
        `${built.message} The sidecar runs on the previous environment (toolgate ${currentCheck.toolgateVersion}) ` +
        `until that is fixed. ${built.fix}`,
    };
  }
  return built;
}

async function build(
  base: PythonOk,
  stamp: EnvStamp,
  wheels: Wheelhouse | undefined,
  deps: EnvSetupDeps,
): Promise<PythonCheck> {
  const wheelDir = wheels?.dir;
  const name = newEnvDirName(stamp, deps.now());
  const dir = path.join(deps.root, name);
  const python = envPython(dir);
  const env = setupEnvironment(deps.env, wheelDir !== undefined);
  const failed = (step: SetupStep, output: string): PythonCheck => {
    fs.rmSync(dir, { recursive: true, force: true }); // nothing half-built stays behind to be used
    const { fix } = diagnose(output, base);
    const summary = outputSummary(output);
    deps.log(`python environment: ${STEP_TITLES[step]} failed; removed ${dir}`);
    return {
      ok: false,
      candidate: base.candidate,
      executable: base.executable,
      problem: 'setupFailed',
      message:
        `Setting up toolgate's Python environment failed while ${STEP_TITLES[step]}` +
        `${summary ? `: ${summary.replace(/[.…]+$/, '')}` : ''}. The sidecar log has the full output.`,
      fix,
      actions: ['showLog', 'openPythonSetting'],
    };
  };

  deps.log(
    `python environment: building ${dir} from ${base.executable} (Python ${base.version}), packages from ` +
      (wheelDir ? `the bundled wheelhouse ${wheelDir} (offline)` : 'the package index: this .vsix carries no wheelhouse'),
  );
  try {
    fs.mkdirSync(deps.root, { recursive: true });
    const free = fs.statfsSync(deps.root);
    if (free.bavail * free.bsize < MIN_FREE_BYTES) {
      const mb = Math.round((free.bavail * free.bsize) / 1024 / 1024);
      return failed('probe', `No space left on device: ${mb} MB free in ${deps.root}`);
    }
  } catch (error) {
    return failed('probe', error instanceof Error ? error.message : String(error));
  }

  deps.progress(`Creating the virtual environment (Python ${base.version})…`);
  // With pip in the wheelhouse the environment gets none: quicker (no ensurepip), and Debian's python3 without
  // python3-venv can still make it.
  const venvArgs = wheels?.pipWheel ? ['-m', 'venv', '--without-pip', dir] : ['-m', 'venv', dir];
  const venv = await step(deps, base.executable, venvArgs, env, TIMEOUTS_MS.venv);
  if (!succeeded(venv)) return failed('venv', combined(venv));

  deps.progress(
    wheelDir
      ? 'Installing toolgate and its dependencies from the bundled wheels…'
      : 'Installing toolgate and its dependencies from the package index…',
  );
  // pip runs from its wheel as a zip application (pip documents `python pip.whl/pip install`).
  const pip = wheels?.pipWheel ? [path.join(wheels.pipWheel, 'pip')] : ['-m', 'pip'];
  const pipArgs = [...pip, 'install', '--no-input', '--progress-bar', 'off'];
  const install = wheelDir
    ? await step(deps, python, [...pipArgs, '--no-index', '--find-links', wheelDir, 'toolgate'], env, TIMEOUTS_MS.install)
    : await step(deps, python, [...pipArgs, deps.packageDir], env, TIMEOUTS_MS.install);
  if (!succeeded(install)) return failed('install', combined(install));

  deps.progress('Checking the new environment…');
  const checked = await verify(base, dir, deps);
  if (!checked.ok) return failed('verify', `${checked.message} ${checked.fix}`);

  try {
    fs.writeFileSync(path.join(dir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
    const previous = readPointer(deps.root);
    writePointer(deps.root, { dir: name, stamp });
    removeLeftovers(deps, name, previous?.dir);
  } catch (error) {
    return failed('switch', error instanceof Error ? error.message : String(error));
  }
  deps.log(`python environment: ${dir} is ready and in use (python ${python})`);
  return checked;
}

/** Whether `dir`'s Python runs toolgate; the result describes the base interpreter, plus where the sidecar runs. */
async function verify(base: PythonOk, dir: string, deps: EnvSetupDeps): Promise<PythonCheck> {
  const python = envPython(dir);
  const check = await checkPython({ command: python, source: base.candidate.source }, deps.run, {
    packageDir: deps.packageDir,
    cwd: deps.root,
    timeoutMs: TIMEOUTS_MS.verify,
  });
  if (!check.ok) return check;
  return { ...base, toolgateVersion: check.toolgateVersion, environment: { python, dir } };
}

async function step(
  deps: EnvSetupDeps,
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<RunResult> {
  deps.log(`python environment: $ ${command} ${args.join(' ')}`);
  const result = await deps.run(command, args, { cwd: deps.root, timeoutMs, env });
  const output = combined(result);
  if (output) deps.log(output);
  return result;
}

function succeeded(result: RunResult): boolean {
  return result.code === 0 && result.failure === undefined;
}

function combined(result: RunResult): string {
  const parts = [result.stdout.trim(), result.stderr.trim()];
  if (result.failure) parts.push(result.failureMessage ?? result.failure);
  else if (result.code !== 0) parts.push(`exit status ${String(result.code)}`);
  return parts.filter((part) => part !== '').join('\n');
}

export function readPointer(root: string): CurrentPointer | undefined {
  try {
    return parsePointer(fs.readFileSync(path.join(root, POINTER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Replaces `current.json` in one step (write aside, then rename): a reader sees the old pointer or the new one. */
function writePointer(root: string, pointer: CurrentPointer): void {
  const temporary = path.join(root, `${POINTER_FILE}.${process.pid}.tmp`);
  fs.writeFileSync(temporary, `${JSON.stringify(pointer, null, 2)}\n`);
  fs.renameSync(temporary, path.join(root, POINTER_FILE));
}

/** An unfinished build younger than this may belong to another window that is building right now. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

function removeLeftovers(deps: EnvSetupDeps, keep: string, previous: string | undefined): void {
  for (const name of leftovers(fs.readdirSync(deps.root), keep, previous)) {
    const dir = path.join(deps.root, name);
    try {
      const complete = fs.existsSync(path.join(dir, STAMP_FILE));
      if (!complete && deps.now() - fs.statSync(dir).mtimeMs < ABANDONED_AFTER_MS) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      deps.log(`python environment: removed the old environment ${dir}`);
    } catch (error) {
      deps.log(`python environment: could not remove ${dir}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
