/**
 * toolgate's private Python environment: the decisions, without I/O (pythonEnvSetup.ts does the work).
 *
 * The sidecar runs from a virtual environment in the extension's global storage, built from a base interpreter and
 * the wheels the .vsix carries. Each environment records what it was built from (its stamp); a new extension
 * version, another base interpreter or other wheels make a new one, in a new directory. `current.json` names the
 * environment in use and is replaced only once a new one is complete, so a failed build leaves the old one working.
 */

import { createHash } from 'node:crypto';
import * as path from 'node:path';

import { venvFix } from './python';

/** What an environment was built from; any difference means another environment. */
export interface EnvStamp {
  extensionVersion: string;
  /** The base interpreter's real `sys.executable`. */
  baseExecutable: string;
  /** Its version, e.g. "3.11.2": an upgraded base Python (same path) needs a new environment too. */
  baseVersion: string;
  /** Where the packages came from: the wheelhouse's digest, or "index" for a vsix without one. */
  packages: string;
}

/** `current.json`: the environment in use. */
export interface CurrentPointer {
  /** The environment's directory name under the root (never a path: the root may move with the profile). */
  dir: string;
  stamp: EnvStamp;
}

export const POINTER_FILE = 'current.json';
export const STAMP_FILE = 'toolgate-env.json';
export const ENV_PREFIX = 'env-';
export const PARTIAL_SUFFIX = '.partial';

export function sameStamp(a: EnvStamp, b: EnvStamp): boolean {
  return (
    a.extensionVersion === b.extensionVersion &&
    a.baseExecutable === b.baseExecutable &&
    a.baseVersion === b.baseVersion &&
    a.packages === b.packages
  );
}

/** A fresh directory name for a build of `stamp`: unique per build, so a rebuild never writes into the one in use. */
export function newEnvDirName(stamp: EnvStamp, now: number): string {
  const digest = createHash('sha256').update(JSON.stringify(stamp)).digest('hex').slice(0, 10);
  return `${ENV_PREFIX}${stamp.extensionVersion}-${digest}-${now.toString(36)}`;
}

/** The interpreter inside an environment directory. */
export function envPython(envDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? path.join(envDir, 'Scripts', 'python.exe') : path.join(envDir, 'bin', 'python');
}

export function parseStamp(value: unknown): EnvStamp | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const fields = ['extensionVersion', 'baseExecutable', 'baseVersion', 'packages'] as const;
  if (!fields.every((field) => typeof record[field] === 'string')) return undefined;
  return {
    extensionVersion: record.extensionVersion as string,
    baseExecutable: record.baseExecutable as string,
    baseVersion: record.baseVersion as string,
    packages: record.packages as string,
  };
}

/** Reads `current.json`'s text; undefined for anything that is not a pointer to a plain directory name. */
export function parsePointer(text: string | undefined): CurrentPointer | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const stamp = parseStamp(value.stamp);
    const dir = value.dir;
    if (!stamp || typeof dir !== 'string' || !dir.startsWith(ENV_PREFIX) || dir.includes('/') || dir.includes('\\')) {
      return undefined;
    }
    return { dir, stamp };
  } catch {
    return undefined;
  }
}

export type EnvPlan = { kind: 'reuse'; dir: string } | { kind: 'build'; previous: CurrentPointer | undefined };

/** Whether the environment in use fits what is wanted now. A forced rebuild (the command) always builds. */
export function planEnvironment(
  current: CurrentPointer | undefined,
  wanted: EnvStamp,
  options: { force: boolean; currentUsable: boolean },
): EnvPlan {
  if (current && !options.force && options.currentUsable && sameStamp(current.stamp, wanted)) {
    return { kind: 'reuse', dir: current.dir };
  }
  return { kind: 'build', previous: current };
}

/**
 * The environment directories to delete after `keep` became current: every other complete or half-built one,
 * except `previous` (another window may still run a sidecar from it until it restarts).
 */
export function leftovers(entries: readonly string[], keep: string, previous: string | undefined): string[] {
  return entries.filter((name) => name.startsWith(ENV_PREFIX) && name !== keep && name !== previous);
}

export type SetupStep = 'probe' | 'venv' | 'install' | 'verify' | 'switch';

export const STEP_TITLES: Record<SetupStep, string> = {
  probe: 'checking the base Python',
  venv: 'creating the virtual environment',
  install: 'installing toolgate and its dependencies',
  verify: 'checking the new environment',
  switch: 'switching to the new environment',
};

export type SetupProblem = 'noVenv' | 'noSpace' | 'offline' | 'other';

export interface SetupDiagnosis {
  problem: SetupProblem;
  fix: string;
}

/** Reads a failed step's output for a cause a person can fix, and says the fix. */
export function diagnose(output: string, base: { version: string }): SetupDiagnosis {
  if (/ensurepip is not\s+available|No module named (venv|ensurepip)|python3(\.\d+)?-venv/i.test(output)) {
    return { problem: 'noVenv', fix: `This Python cannot create virtual environments. ${venvFix(base.version)}` };
  }
  if (/No space left on device|ENOSPC|Disk quota exceeded/i.test(output)) {
    return {
      problem: 'noSpace',
      fix:
        "The disk is full: toolgate's environment needs about 180 MB in the editor's global storage. Free some " +
        'space, then restart the sidecar.',
    };
  }
  if (/No matching distribution|Could not find a version|NewConnectionError|Failed to establish|--no-index/i.test(output)) {
    return {
      problem: 'offline',
      fix:
        'pip could not get the packages. This .vsix carries no wheels for this platform and Python, so they come ' +
        'from the package index: connect to it (or set pip up for your proxy), or install the .vsix built for your ' +
        'platform, then restart the sidecar.',
    };
  }
  return {
    problem: 'other',
    fix: 'The sidecar log has the full output. Fix the cause, then restart the sidecar; or set toolgate.python.path to another Python 3.11+.',
  };
}

/**
 * One sentence from a failed step's output, for the chat (the log has all of it): pip's first error line, else the
 * first sentence (Debian's venv message wraps one sentence over several lines).
 */
export function outputSummary(output: string, maxLength = 300): string {
  const lines = output
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^exit status \d+$/.test(line));
  const error = lines.find((line) => /^(ERROR|Error|error)\b|Error:/.test(line));
  const text = error ?? lines.join(' ').replace(/\s+/g, ' ');
  const sentence = error ? text : (/^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text);
  return sentence.length > maxLength ? `${sentence.slice(0, maxLength - 1)}…` : sentence;
}
