/**
 * The extension's settings as they are now, and the API keys stored with "toolgate: Set API Key". Read again when
 * either changes; what the change means (restart the sidecar, reconfigure the model, …) is `classifyChange`'s to say
 * and the controller's to apply.
 */

import type { Notifier, SecretStore } from '../host';
import type { Provider, SettingReader, SettingsChange, ToolgateSettings } from './settings';
import { PROVIDERS, apiKeySecretName, apiKeyVariable, classifyChange, readSettings } from './settings';

export interface LiveSettingsDeps {
  read: SettingReader;
  secrets: Pick<SecretStore, 'get'>;
  notifier: Pick<Notifier, 'show'>;
  /** The process environment (an API key may come from there instead). */
  env: NodeJS.ProcessEnv;
  log(line: string): void;
}

export class LiveSettings {
  private settings: ToolgateSettings;
  private storedKeys: Partial<Record<Provider, string>> = {};

  constructor(private readonly deps: LiveSettingsDeps) {
    this.settings = this.load();
  }

  get current(): ToolgateSettings {
    return this.settings;
  }

  /** The stored keys, per provider, as last read. */
  get keys(): Partial<Record<Provider, string>> {
    return this.storedKeys;
  }

  /** Whether the chosen provider has a key: stored in the editor, or in the environment. */
  hasKey(): boolean {
    const provider = this.settings.provider;
    return Boolean(this.storedKeys[provider] ?? this.deps.env[apiKeyVariable(provider)]);
  }

  async readKeys(): Promise<Partial<Record<Provider, string>>> {
    const entries = await Promise.all(PROVIDERS.map(async (name) => [name, await this.deps.secrets.get(apiKeySecretName(name))]));
    this.storedKeys = Object.fromEntries(entries.filter(([, key]) => key)) as Partial<Record<Provider, string>>;
    return this.storedKeys;
  }

  /** Read the settings (and, when a key changed, the keys) again; what changed, for the controller to apply. */
  async reload(keyChanged: boolean): Promise<SettingsChange> {
    const before = this.settings;
    this.settings = this.load();
    if (keyChanged) await this.readKeys();
    return classifyChange(before, this.settings, keyChanged);
  }

  private load(): ToolgateSettings {
    const { settings, problems } = readSettings(this.deps.read);
    for (const problem of problems) this.deps.log(`settings: ${problem}`);
    if (problems.length > 0) void this.deps.notifier.show('warning', `toolgate settings: ${problems.join(' ')}`);
    return settings;
  }
}
