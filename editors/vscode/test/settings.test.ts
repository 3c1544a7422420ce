import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_KEY_SOURCE, serverSettings, withoutDefaults } from '../src/settings';

const config = {
  server: { path: '/x', pythonPath: '', args: [] },
  saveAgentEdits: true,
  attachActiveEditor: true,
  defaultWhileRunning: 'queue',
  model: { provider: 'openai', model: 'gpt-x', baseUrl: '', contextWindow: null },
  sessionsDir: '',
};

test('client-only and empty settings stay in the editor; the key comes from secret storage', () => {
  assert.deepEqual(serverSettings(config, { openai: 'sk-1', anthropic: 'ak' }), {
    model: { provider: 'openai', model: 'gpt-x', apiKey: 'sk-1', apiKeySource: API_KEY_SOURCE },
  });
});

test('auto with exactly one stored key uses that provider', () => {
  const auto = { model: { provider: 'auto' } };
  assert.deepEqual(serverSettings(auto, { anthropic: 'ak' }), { model: { provider: 'anthropic', apiKey: 'ak', apiKeySource: API_KEY_SOURCE } });
  assert.deepEqual(serverSettings(auto, {}), { model: { provider: 'auto' } });
  assert.deepEqual(serverSettings(auto, { anthropic: 'a', openai: 'o' }), { model: { provider: 'auto' } });
});

test('a scripted model passes through untouched', () => {
  const scripted = { model: { provider: 'scripted', script: [{ text: 'hi' }] }, sessionsDir: '/tmp/s' };
  assert.deepEqual(serverSettings(scripted, {}), scripted);
});

test("values the user never set are left out, so the server's config.toml decides", () => {
  const merged = { model: { provider: 'auto', model: 'gpt-x' }, edits: { review: 'apply' }, mcpServers: { t: {} } };
  const set: Record<string, unknown> = { 'model.model': 'gpt-x' };
  const inspect = (name: string) => ({ globalValue: set[name] });
  assert.deepEqual(withoutDefaults(merged, ['model.provider', 'model.model', 'edits.review'], inspect), {
    model: { model: 'gpt-x' },
    edits: {},
    mcpServers: { t: {} },
  });
  const workspace = (name: string) => (name === 'edits.review' ? { workspaceValue: 'apply' } : {});
  assert.deepEqual(withoutDefaults(merged, ['edits.review'], workspace).edits, { review: 'apply' }, 'set to the default on purpose: sent');
});
