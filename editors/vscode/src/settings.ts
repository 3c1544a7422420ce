// What the server receives as settings (initializationOptions and the
// workspace/configuration section "agentLsp"): the user's agentLsp.* settings
// without the client-only ones, plus the API key from SecretStorage.

export const CLIENT_ONLY_KEYS = ['server', 'saveAgentEdits', 'attachActiveEditor', 'defaultWhileRunning'];
export const KEY_PROVIDERS = ['openai', 'anthropic'] as const;
export const API_KEY_SOURCE = 'the "Agent: Set API Key…" command';
export type KeyProvider = (typeof KEY_PROVIDERS)[number];

export function secretName(provider: string): string {
  return `agentLsp.apiKey.${provider}`;
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

/** Drop empty values so the server's own defaults apply. */
function prune(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(prune);
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (!isEmpty(v)) {
        out[k] = prune(v);
      }
    }
    return out;
  }
  return value;
}

/** Where a setting's value comes from, as `WorkspaceConfiguration.inspect` says. */
export interface SettingValues {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The settings that choose the program the extension runs or where the user's
 * key is sent. Only the user sets them: package.json gives them
 * `"scope": "machine"`, which VS Code does not read from a folder's
 * .vscode/settings.json, and the extension keeps to the user's value too.
 */
export const USER_ONLY_SETTINGS = ['server.path', 'server.pythonPath', 'server.args', 'server.env', 'model.baseUrl'];

/**
 * A user-only setting (`USER_ONLY_SETTINGS`) as the user set it, else `fallback`:
 * a value from a folder's or workspace's settings is never taken.
 */
export function userValue<T>(inspect: (name: string) => SettingValues | undefined, name: string, fallback: T): T {
  if (!USER_ONLY_SETTINGS.includes(name)) {
    throw new Error(`agentLsp.${name} is not a user-only setting`);
  }
  const value = inspect(name)?.globalValue;
  return value === undefined || value === null ? fallback : (value as T);
}

/**
 * The settings object without the values the user never set: VS Code's
 * defaults are not the user's choice, and sent, they would override the
 * server's own layers (config.toml, a project's .agent-lsp). A user-only
 * setting (`USER_ONLY_SETTINGS`) keeps the user's value, whatever a folder says.
 * @param names the contributed setting names under `agentLsp.` (e.g. `model.provider`)
 */
export function withoutDefaults(
  config: Record<string, unknown>,
  names: string[],
  inspect: (name: string) => SettingValues | undefined,
): Record<string, unknown> {
  const out = JSON.parse(JSON.stringify(config ?? {})) as Record<string, any>;
  for (const name of names) {
    const values = inspect(name);
    const userOnly = USER_ONLY_SETTINGS.includes(name);
    const set = userOnly ? [values?.globalValue] : [values?.globalValue, values?.workspaceValue, values?.workspaceFolderValue];
    if (!values && !userOnly) {
      continue;
    }
    const path = name.split('.');
    const parent = path.slice(0, -1).reduce<any>((node, key) => (node && typeof node === 'object' ? node[key] : undefined), out);
    if (!parent || typeof parent !== 'object') {
      continue;
    }
    if (set.every((v) => v === undefined)) {
      delete parent[path[path.length - 1]];
    } else if (userOnly) {
      parent[path[path.length - 1]] = JSON.parse(JSON.stringify(values?.globalValue));
    }
  }
  return out;
}

/**
 * @param config the plain `agentLsp` settings object
 * @param keys stored API keys by provider (never written to settings.json)
 */
export function serverSettings(config: Record<string, unknown>, keys: Partial<Record<string, string>>): Record<string, unknown> {
  const out = prune(JSON.parse(JSON.stringify(config ?? {}))) as Record<string, any>;
  for (const key of CLIENT_ONLY_KEYS) {
    delete out[key];
  }
  const model: Record<string, any> = (out.model ??= {});
  let provider = String(model.provider ?? 'auto');
  if (provider === 'auto') {
    // With exactly one stored key, "auto" means that provider.
    const stored = KEY_PROVIDERS.filter((p) => keys[p]);
    if (stored.length === 1 && !model.apiKey) {
      provider = stored[0];
      model.provider = provider;
    }
  }
  const key = keys[provider];
  if (key && !model.apiKey) {
    model.apiKey = key;
    // an authentication failure then points to this extension's command, not to a model.apiKey VS Code users do not have
    model.apiKeySource = API_KEY_SOURCE;
  }
  if (Object.keys(model).length === 0) {
    delete out.model;
  }
  return out;
}
