import { describe, expect, it } from 'vitest';

import {
  DEFAULT_SETTINGS,
  classifyChange,
  initializationOptions,
  providerConfiguration,
  readSettings,
  resolvePythonPath,
  sidecarEnvironment,
} from '../src/settings/settings';
import { reviewEditsFor } from '../src/protocol';

const reader = (values: Record<string, unknown>) => (key: string) => values[key];

describe('readSettings', () => {
  it('gives the defaults for an empty configuration, with no problems', () => {
    expect(readSettings(reader({}))).toEqual({ settings: DEFAULT_SETTINGS, problems: [] });
  });

  it('reads every setting', () => {
    const { settings, problems } = readSettings(
      reader({
        provider: 'openai',
        model: ' gpt-4.1 ',
        baseUrl: 'http://127.0.0.1:11434/v1',
        'python.path': '~/venv/bin/python',
        'python.useInterpreterDirectly': true,
        'permissions.defaultMode': 'acceptEdits',
        diffReview: 'always',
        maxToolConcurrency: 4,
        approvalTimeoutMinutes: 15,
        contextWindow: 32_000,
      }),
    );
    expect(problems).toEqual([]);
    expect(settings).toEqual({
      provider: 'openai',
      model: 'gpt-4.1',
      baseUrl: 'http://127.0.0.1:11434/v1',
      pythonPath: '~/venv/bin/python',
      useInterpreterDirectly: true,
      defaultMode: 'acceptEdits',
      diffReview: 'always',
      maxToolConcurrency: 4,
      approvalTimeoutMinutes: 15,
      contextWindow: 32_000,
    });
  });

  it('replaces values that make no sense by the default, and names each one', () => {
    const { settings, problems } = readSettings(
      reader({
        provider: 'gemini',
        baseUrl: 'localhost:8080',
        'permissions.defaultMode': 'yolo',
        diffReview: 'never',
        maxToolConcurrency: 0.5,
        model: 42,
      }),
    );
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(problems).toHaveLength(6);
    expect(problems[0]).toContain('toolgate.provider is "gemini"');
    expect(problems.join(' ')).toContain('toolgate.baseUrl "localhost:8080" is not an http(s) URL');
  });

  it('reads review mode "after" and hands it to the sidecar as such ("before" stays the default)', () => {
    expect(readSettings(reader({ diffReview: 'after' })).settings.diffReview).toBe('after');
    expect(reviewEditsFor('after')).toBe('after');
    expect(reviewEditsFor(DEFAULT_SETTINGS.diffReview)).toBe('when_asking');
  });

  it('takes a context window of at least 1,000 tokens, 0 as the model\'s known one, and names anything else', () => {
    expect(readSettings(reader({ contextWindow: 1_000 })).settings.contextWindow).toBe(1_000);
    expect(readSettings(reader({ contextWindow: 0 }))).toEqual({ settings: DEFAULT_SETTINGS, problems: [] });
    for (const bad of [999, -5, 24_000.5, '24000', true]) {
      const { settings, problems } = readSettings(reader({ contextWindow: bad }));
      expect(settings.contextWindow).toBeNull();
      expect(problems).toEqual([
        `toolgate.contextWindow must be a whole number of tokens, at least 1,000 (or 0 for the model's known window); ` +
          `ignoring ${JSON.stringify(bad)} and using the model's known window.`,
      ]);
    }
  });

  it('caps the tool concurrency at 64', () => {
    const { settings, problems } = readSettings(reader({ maxToolConcurrency: 500 }));
    expect(settings.maxToolConcurrency).toBe(64);
    expect(problems).toHaveLength(1);
  });

  it('takes the approval timeout in minutes, capped at a week; nonsense falls back to an hour, reported', () => {
    expect(readSettings(reader({ approvalTimeoutMinutes: 2.5 })).settings.approvalTimeoutMinutes).toBe(2.5);
    const capped = readSettings(reader({ approvalTimeoutMinutes: 1e9 }));
    expect(capped.settings.approvalTimeoutMinutes).toBe(7 * 24 * 60);
    expect(capped.problems).toEqual([expect.stringContaining('at most 10080')]);
    for (const bad of [0, -5, 'soon', Number.NaN]) {
      const { settings, problems } = readSettings(reader({ approvalTimeoutMinutes: bad }));
      expect(settings.approvalTimeoutMinutes).toBe(60);
      expect(problems).toEqual([expect.stringContaining('toolgate.approvalTimeoutMinutes')]);
    }
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, approvalTimeoutMinutes: 5 })).toMatchObject({ restart: true });
  });
});

describe('resolvePythonPath', () => {
  it('expands ~, ${workspaceFolder} and relative paths, and leaves bare commands for PATH', () => {
    expect(resolvePythonPath('~/venv/bin/python', '/ws', '/home/me')).toBe('/home/me/venv/bin/python');
    expect(resolvePythonPath('${workspaceFolder}/.venv/bin/python', '/ws')).toBe('/ws/.venv/bin/python');
    expect(resolvePythonPath('.venv/bin/python', '/ws')).toBe('/ws/.venv/bin/python');
    expect(resolvePythonPath('python3.12', '/ws')).toBe('python3.12');
    expect(resolvePythonPath('  ', '/ws')).toBe('');
  });
});

describe('mapping to the sidecar', () => {
  it('passes the API keys only in the environment, each under its provider\'s variable', () => {
    const env = sidecarEnvironment({ ...DEFAULT_SETTINGS, maxToolConcurrency: 3 }, { openai: 'sk-test' }, {
      PATH: '/usr/bin',
      OPENAI_API_KEY: 'from-env',
      ANTHROPIC_API_KEY: 'inherited',
    });
    expect(env.OPENAI_API_KEY).toBe('sk-test'); // the stored key wins
    expect(env.ANTHROPIC_API_KEY).toBe('inherited'); // none stored: the inherited one stays
    expect(env.PATH).toBe('/usr/bin');
    expect(env.TOOLGATE_MAX_TOOL_CONCURRENCY).toBe('3');
    const configure = providerConfiguration({ ...DEFAULT_SETTINGS, provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' });
    expect(configure).toEqual({
      provider: 'openai',
      model: null,
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: null,
      contextWindow: null,
    });
    expect(providerConfiguration({ ...DEFAULT_SETTINGS, contextWindow: 24_000 }).contextWindow).toBe(24_000);
    expect(initializationOptions({ approvalTimeoutMinutes: 90 }, { storageDir: '/storage' })).toEqual({
      storageDir: '/storage',
      editorAnswerTimeoutSeconds: 5400,
      editorProblems: true,
    });
  });

  it('restarts the sidecar only for a new Python, environment or key; reconfigures it for the rest', () => {
    const none = { restart: false, provider: false, reviewEdits: false };
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS })).toEqual(none);
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, pythonPath: '/other/python' })).toMatchObject({ restart: true });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, useInterpreterDirectly: true })).toMatchObject({
      restart: true,
    });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, maxToolConcurrency: 2 })).toMatchObject({ restart: true });
    expect(classifyChange(DEFAULT_SETTINGS, DEFAULT_SETTINGS, true)).toMatchObject({ restart: true });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, provider: 'openai' })).toEqual({ ...none, provider: true });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, model: 'm' })).toEqual({ ...none, provider: true });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, contextWindow: 8_000 })).toEqual({ ...none, provider: true });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, diffReview: 'always' })).toEqual({ ...none, reviewEdits: true });
    expect(classifyChange(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, defaultMode: 'plan' })).toEqual(none);
  });
});
