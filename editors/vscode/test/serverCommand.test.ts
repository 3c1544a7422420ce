import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MISSING_SERVER_MESSAGE, resolveServerCommand, ServerLaunchSettings } from '../src/serverCommand';

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

test('a workspace venv named venv is found too', () => {
  const cmd = resolveServerCommand(none, ['/ws'], env(['/ws/venv/bin/agent-lsp', '/usr/bin/agent-lsp']));
  assert.deepEqual([cmd?.command, cmd?.source], ['/ws/venv/bin/agent-lsp', '/ws/venv']);
});

test("the Python extension's interpreter's environment comes before PATH", () => {
  const files = ['/home/me/envs/work/bin/agent-lsp', '/usr/bin/agent-lsp'];
  const cmd = resolveServerCommand(none, ['/ws'], { ...env(files), pythonInterpreter: '/home/me/envs/work/bin/python' });
  assert.deepEqual([cmd?.command, cmd?.source], ['/home/me/envs/work/bin/agent-lsp', "the Python extension's interpreter"]);
  // An interpreter without agent-lsp beside it is passed over.
  const other = resolveServerCommand(none, ['/ws'], { ...env(['/usr/bin/agent-lsp']), pythonInterpreter: '/usr/local/bin/python3' });
  assert.equal(other?.source, 'PATH');
});

test('pip --user, pipx and uv tool installs are found when their bin dir is not on PATH', () => {
  const at = (file: string, variables: Record<string, string> = {}) =>
    resolveServerCommand(none, ['/ws'], { ...env([file]), home: '/home/me', variables });
  assert.equal(at('/home/me/.local/bin/agent-lsp')?.source, '~/.local/bin');
  assert.deepEqual(
    [at('/home/me/.local/pipx/venvs/agent-language-server/bin/agent-lsp')?.command, at('/home/me/.local/pipx/venvs/agent-language-server/bin/agent-lsp')?.source],
    ['/home/me/.local/pipx/venvs/agent-language-server/bin/agent-lsp', 'pipx'],
  );
  assert.equal(at('/home/me/.local/share/pipx/venvs/agent-language-server/bin/agent-lsp')?.source, 'pipx');
  assert.equal(at('/opt/pipx/venvs/agent-language-server/bin/agent-lsp', { PIPX_HOME: '/opt/pipx' })?.source, 'pipx');
  assert.equal(at('/home/me/.local/share/uv/tools/agent-language-server/bin/agent-lsp')?.source, 'uv tool');
  assert.equal(at('/data/uv/tools/agent-language-server/bin/agent-lsp', { XDG_DATA_HOME: '/data' })?.source, 'uv tool');
  assert.equal(at('/tools/agent-language-server/bin/agent-lsp', { UV_TOOL_DIR: '/tools' })?.source, 'uv tool');
  assert.equal(at('/home/me/.local/share/uv/tools/other/bin/agent-lsp'), null);
});

test('the not-found message says how to install the server from a checkout', () => {
  assert.match(MISSING_SERVER_MESSAGE, /"pipx install \/path\/to\/checkout"/);
  assert.doesNotMatch(MISSING_SERVER_MESSAGE, /`/, 'a notification shows backticks as they are');
  assert.match(MISSING_SERVER_MESSAGE, /"pipx install agent-language-server" once it is published/);
});
