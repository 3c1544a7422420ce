import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveServerCommand, ServerLaunchSettings } from '../src/serverCommand';

const none: ServerLaunchSettings = { path: '', pythonPath: '', args: [] };
function env(files: string[], pathVariable = '/usr/local/bin:/usr/bin') {
  return { pathVariable, platform: 'linux' as NodeJS.Platform, isExecutable: (f: string) => files.includes(f) };
}

test('a configured path wins', () => {
  const cmd = resolveServerCommand({ ...none, path: '/opt/agent-lsp', args: ['--log', 'debug'] }, ['/ws'], env(['/ws/.venv/bin/agent-lsp']));
  assert.deepEqual(cmd, { command: '/opt/agent-lsp', args: ['--log', 'debug'], source: 'agentLsp.server.path' });
});

test('a configured interpreter runs the module', () => {
  const cmd = resolveServerCommand({ ...none, pythonPath: '/usr/bin/python3' }, [], env([]));
  assert.deepEqual(cmd?.command, '/usr/bin/python3');
  assert.deepEqual(cmd?.args, ['-m', 'agent_lsp']);
});

test('the workspace .venv comes before PATH', () => {
  const cmd = resolveServerCommand(none, ['/a', '/ws'], env(['/ws/.venv/bin/agent-lsp', '/usr/bin/agent-lsp']));
  assert.equal(cmd?.command, '/ws/.venv/bin/agent-lsp');
  const onPath = resolveServerCommand(none, ['/a'], env(['/usr/bin/agent-lsp']));
  assert.equal(onPath?.command, '/usr/bin/agent-lsp');
  assert.equal(onPath?.source, 'PATH');
});

test('nothing found is reported, not guessed', () => {
  assert.equal(resolveServerCommand(none, ['/ws'], env([])), null);
});
