/**
 * The `toolgate.*` settings: read and checked once, then mapped to what the sidecar gets (its initialization
 * options and environment). A value that makes no sense is replaced by the default and reported, never passed on.
 */

import * as os from 'node:os';
import * as path from 'node:path';

import type { DiffReviewPolicy, InitializationOptions, PermissionMode, ProviderConfigureParams } from '../protocol';
import { PERMISSION_MODES } from '../protocol';

export const PROVIDERS = ['anthropic', 'openai'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface ToolgateSettings {
  provider: Provider;
  model: string;
  baseUrl: string;
  pythonPath: string;
  /** Run the sidecar on the chosen Python itself instead of toolgate's private environment built from it. */
  useInterpreterDirectly: boolean;
  defaultMode: PermissionMode;
  diffReview: DiffReviewPolicy;
  maxToolConcurrency: number;
  /** How long an approval card or diff review waits for an answer before it counts as "no". */
  approvalTimeoutMinutes: number;
  /** The model's context window in tokens (compaction starts at a share of it); null: the sidecar's table's. */
  contextWindow: number | null;
}

export const DEFAULT_SETTINGS: ToolgateSettings = {
  provider: 'anthropic',
  model: '',
  baseUrl: '',
  pythonPath: '',
  useInterpreterDirectly: false,
  defaultMode: 'default',
  diffReview: 'whenAsking',
  maxToolConcurrency: 10,
  approvalTimeoutMinutes: 60,
  contextWindow: null,
};

/** The smallest window the sidecar accepts (model_catalog.MIN_CONTEXT_WINDOW): the tools alone would fill less. */
export const MIN_CONTEXT_WINDOW = 1_000;

/** A week: an approval left open longer than that is forgotten, not pending. */
export const MAX_APPROVAL_TIMEOUT_MINUTES = 7 * 24 * 60;

/** Reads one setting under `toolgate.` (for example `get('python.path')`); undefined when unset. */
export type SettingReader = (key: string) => unknown;

export interface SettingsReadResult {
  settings: ToolgateSettings;
  /** One sentence per ignored value, for a warning. */
  problems: string[];
}

function oneOf<T extends string>(
  key: string,
  value: unknown,
  allowed: readonly T[],
  fallback: T,
  problems: string[],
): T {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  problems.push(`toolgate.${key} is ${JSON.stringify(value)}, which is not one of ${allowed.join(', ')}; using ${fallback}.`);
  return fallback;
}

function trimmedString(key: string, value: unknown, problems: string[]): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value.trim();
  problems.push(`toolgate.${key} must be a string; ignoring ${JSON.stringify(value)}.`);
  return '';
}

export function readSettings(get: SettingReader): SettingsReadResult {
  const problems: string[] = [];
  const provider = oneOf('provider', get('provider'), PROVIDERS, DEFAULT_SETTINGS.provider, problems);
  const model = trimmedString('model', get('model'), problems);
  let baseUrl = trimmedString('baseUrl', get('baseUrl'), problems);
  if (baseUrl && !/^https?:\/\/[^\s/]+/i.test(baseUrl)) {
    problems.push(`toolgate.baseUrl ${JSON.stringify(baseUrl)} is not an http(s) URL; using the provider's endpoint.`);
    baseUrl = '';
  }
  const pythonPath = trimmedString('python.path', get('python.path'), problems);
  const rawDirect = get('python.useInterpreterDirectly');
  const useInterpreterDirectly = rawDirect === true;
  if (rawDirect !== undefined && rawDirect !== null && typeof rawDirect !== 'boolean') {
    problems.push(`toolgate.python.useInterpreterDirectly must be true or false; using false.`);
  }
  const defaultMode = oneOf(
    'permissions.defaultMode',
    get('permissions.defaultMode'),
    PERMISSION_MODES,
    DEFAULT_SETTINGS.defaultMode,
    problems,
  );
  const diffReview = oneOf(
    'diffReview',
    get('diffReview'),
    ['always', 'whenAsking', 'after'] as const,
    DEFAULT_SETTINGS.diffReview,
    problems,
  );
  let maxToolConcurrency = DEFAULT_SETTINGS.maxToolConcurrency;
  const rawConcurrency = get('maxToolConcurrency');
  if (rawConcurrency !== undefined && rawConcurrency !== null) {
    if (typeof rawConcurrency === 'number' && Number.isInteger(rawConcurrency) && rawConcurrency >= 1) {
      maxToolConcurrency = Math.min(rawConcurrency, 64);
      if (rawConcurrency > 64) problems.push(`toolgate.maxToolConcurrency is at most 64; using 64.`);
    } else {
      problems.push(
        `toolgate.maxToolConcurrency must be a whole number from 1 to 64; using ${DEFAULT_SETTINGS.maxToolConcurrency}.`,
      );
    }
  }
  const approvalTimeoutMinutes = approvalTimeout(get('approvalTimeoutMinutes'), problems);
  const contextWindow = contextWindowSetting(get('contextWindow'), problems);
  return {
    settings: {
      provider,
      model,
      baseUrl,
      pythonPath,
      useInterpreterDirectly,
      defaultMode,
      diffReview,
      maxToolConcurrency,
      approvalTimeoutMinutes,
      contextWindow,
    },
    problems,
  };
}

/** 0 or unset: the model's known window. Anything but a whole number of at least MIN_CONTEXT_WINDOW is reported. */
function contextWindowSetting(raw: unknown, problems: string[]): number | null {
  if (raw === undefined || raw === null || raw === 0) return null;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= MIN_CONTEXT_WINDOW) return raw;
  problems.push(
    `toolgate.contextWindow must be a whole number of tokens, at least ${MIN_CONTEXT_WINDOW.toLocaleString('en-US')} ` +
      `(or 0 for the model's known window); ignoring ${JSON.stringify(raw)} and using the model's known window.`,
  );
  return null;
}

function approvalTimeout(raw: unknown, problems: string[]): number {
  const fallback = DEFAULT_SETTINGS.approvalTimeoutMinutes;
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === 'number' && Number.isFinite(raw) && raw > 0) {
    if (raw <= MAX_APPROVAL_TIMEOUT_MINUTES) return raw;
    problems.push(`toolgate.approvalTimeoutMinutes is at most ${MAX_APPROVAL_TIMEOUT_MINUTES} (a week); using that.`);
    return MAX_APPROVAL_TIMEOUT_MINUTES;
  }
  problems.push(`toolgate.approvalTimeoutMinutes must be a number of minutes above 0; using ${fallback}.`);
  return fallback;
}

/**
 * The Python path as written in settings, made absolute: `~` is the home directory, `${workspaceFolder}` and relative
 * paths are resolved against the first workspace folder. A bare command name (`python3.12`) stays as it is, to be
 * looked up on PATH.
 */
export function resolvePythonPath(raw: string, workspaceFolder: string | undefined, home: string = os.homedir()): string {
  let value = raw.trim();
  if (!value) return value;
  if (workspaceFolder) value = value.replaceAll('${workspaceFolder}', workspaceFolder);
  if (value === '~' || value.startsWith('~/')) value = path.join(home, value.slice(1));
  if (path.isAbsolute(value) || !value.includes('/')) return value;
  return path.resolve(workspaceFolder ?? process.cwd(), value);
}

/** The environment variable each provider's SDK reads its key from. */
export function apiKeyVariable(provider: Provider): string {
  return provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
}

/** Where a provider's key lives in SecretStorage. */
export function apiKeySecretName(provider: Provider): string {
  return `toolgate.apiKey.${provider}`;
}

export function initializationOptions(
  settings: Pick<ToolgateSettings, 'approvalTimeoutMinutes'>,
  context: { storageDir: string | null },
): InitializationOptions {
  // editorProblems: this extension answers toolgate/editor/problems (src/editor/problems.ts).
  return { storageDir: context.storageDir, editorAnswerTimeoutSeconds: settings.approvalTimeoutMinutes * 60, editorProblems: true };
}

/** What `toolgate/provider/configure` gets. The key is not in it: it reaches the sidecar in its environment. */
export function providerConfiguration(settings: ToolgateSettings): ProviderConfigureParams {
  return {
    provider: settings.provider,
    model: settings.model || null,
    baseUrl: settings.baseUrl || null,
    apiKey: null,
    contextWindow: settings.contextWindow,
  };
}

/**
 * The sidecar's environment: the editor's, plus the API keys from SecretStorage (each wins over one inherited from
 * the environment) and the concurrency limit. Keys travel only in the child's environment: never in a JSON-RPC
 * message (which the trace setting would log, and VS Code keeps output logs on disk) and never in a file.
 */
export function sidecarEnvironment(
  settings: ToolgateSettings,
  keys: Partial<Record<Provider, string>>,
  base: NodeJS.ProcessEnv,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined) env[name] = value;
  for (const provider of PROVIDERS) {
    const key = keys[provider];
    if (key) env[apiKeyVariable(provider)] = key;
  }
  env.TOOLGATE_MAX_TOOL_CONCURRENCY = String(settings.maxToolConcurrency);
  env.PYTHONUNBUFFERED = '1';
  env.PYTHONIOENCODING = 'utf-8';
  return env;
}

export interface SettingsChange {
  /** A new sidecar process is needed: another Python, another environment (a key, the concurrency limit). */
  restart: boolean;
  /** The running sidecar gets `toolgate/provider/configure`. */
  provider: boolean;
  /** The open session gets `toolgate/settings/setReviewEdits`. */
  reviewEdits: boolean;
}

export function classifyChange(
  before: ToolgateSettings,
  after: ToolgateSettings,
  keyChanged: boolean = false,
): SettingsChange {
  return {
    restart:
      keyChanged ||
      before.pythonPath !== after.pythonPath ||
      before.useInterpreterDirectly !== after.useInterpreterDirectly ||
      before.maxToolConcurrency !== after.maxToolConcurrency ||
      before.approvalTimeoutMinutes !== after.approvalTimeoutMinutes,
    provider:
      before.provider !== after.provider ||
      before.model !== after.model ||
      before.baseUrl !== after.baseUrl ||
      before.contextWindow !== after.contextWindow,
    reviewEdits: before.diffReview !== after.diffReview,
  };
}
