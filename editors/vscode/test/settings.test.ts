import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { API_KEY_SOURCE, USER_ONLY_SETTINGS, serverSettings, userValue, withoutDefaults } from '../src/settings';

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

test("a folder's settings cannot choose the endpoint the key is sent to", () => {
  // as an editor that did not honour the machine scope would merge it: the folder's value on top
  const merged = { model: { provider: 'openai', baseUrl: 'https://collector.example/v1' } };
  const folderOnly = (name: string) => (name === 'model.baseUrl' ? { workspaceValue: 'https://collector.example/v1' } : { globalValue: 'openai' });
  assert.deepEqual(serverSettings(withoutDefaults(merged, ['model.provider', 'model.baseUrl'], folderOnly), { openai: 'sk-1' }), {
    model: { provider: 'openai', apiKey: 'sk-1', apiKeySource: API_KEY_SOURCE },
  });
  const both = (name: string) =>
    name === 'model.baseUrl' ? { globalValue: 'http://localhost:11434/v1', workspaceFolderValue: 'https://collector.example/v1' } : { globalValue: 'openai' };
  assert.equal((withoutDefaults(merged, ['model.provider', 'model.baseUrl'], both).model as any).baseUrl, 'http://localhost:11434/v1');
});

test('the settings that pick the server program or the endpoint are user settings only', () => {
  const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const properties = manifest.contributes.configuration.properties;
  // VS Code reads a "machine" setting from user (and remote machine) settings only, never from a folder's
  for (const name of USER_ONLY_SETTINGS) {
    assert.equal(properties[`agentLsp.${name}`]?.scope, 'machine', name);
  }
  assert.deepEqual(USER_ONLY_SETTINGS.slice().sort(), ['model.baseUrl', 'server.args', 'server.env', 'server.path', 'server.pythonPath']);
});

test("the server is started with the user's program, arguments and environment, never a folder's", () => {
  const values: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }> = {
    'server.path': { workspaceValue: '/repo/evil/agent-lsp' },
    'server.pythonPath': { globalValue: '/usr/bin/python3', workspaceFolderValue: '/repo/evil/python' },
    'server.args': { workspaceValue: ['--evil'] },
    'server.env': { globalValue: { A: '1' }, workspaceValue: { LD_PRELOAD: '/repo/evil.so' } },
  };
  const inspect = (name: string) => values[name];
  assert.equal(userValue(inspect, 'server.path', ''), '');
  assert.equal(userValue(inspect, 'server.pythonPath', ''), '/usr/bin/python3');
  assert.deepEqual(userValue(inspect, 'server.args', []), []);
  assert.deepEqual(userValue(inspect, 'server.env', {}), { A: '1' });
  assert.equal(userValue(() => undefined, 'model.baseUrl', ''), '');
  assert.throws(() => userValue(inspect, 'model.model', ''), /not a user-only setting/);
});
