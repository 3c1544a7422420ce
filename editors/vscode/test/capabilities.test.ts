import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HookItem, applyEvents, createTranscript, loadTranscript } from '../src/transcript';
import { hookLine } from '../src/hooks';
import { mcpAuthorizedMessage, mcpServerActions, mcpServerRow, mcpToolTitle } from '../src/mcp';
import { nestSessions } from '../src/subagents';
import { Log } from './events';

test('hook runs are items of their turn, the same live and on reload', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('hook/run', { event: 'UserPromptSubmit', command: 'echo noted', source: 'user', origin: 'settings', outcome: 'allowed', message: '', exitCode: 0 });
  log.add('hook/run', { event: 'PreToolUse', command: 'sh guard.sh', source: 'project', origin: '.claude/settings.json', outcome: 'blocked', message: 'echo is not allowed here\nsee the docs', exitCode: 2 });
  log.add('hook/run', { event: 'Stop', command: 'sleep 9', source: 'user', origin: 'settings', outcome: 'timeout', message: 'did not answer within 1 s' });
  log.add('turn/end', { turn: 1, reason: { kind: 'completed' } });
  const live = createTranscript('s');
  applyEvents(live, log.events);
  const hooks = live.items.filter((i) => i.kind === 'hook') as HookItem[];
  assert.deepEqual(hooks.map(hookLine), [
    'hook UserPromptSubmit · echo noted · allowed',
    'hook PreToolUse · sh guard.sh · blocked: echo is not allowed here',
    'hook Stop · sleep 9 · timed out: did not answer within 1 s',
  ]);
  assert.deepEqual(hooks.map((h) => [h.turn, h.origin, h.exitCode]), [[1, 'settings', 0], [1, '.claude/settings.json', 2], [1, 'settings', null]]);
  const reloaded = loadTranscript('s', log.events, 'idle');
  const strip = (items: any[]) => items.map(({ rev: _rev, ...rest }) => rest);
  assert.deepEqual(strip(reloaded.items.filter((i) => i.kind === 'hook')), strip(hooks));
});

test('an MCP tool card names the server and the tool; other tools keep their names', () => {
  assert.equal(mcpToolTitle('mcp__time__get_current_time'), 'time › get_current_time');
  assert.equal(mcpToolTitle('mcp__my_server__do__it'), 'my_server › do__it');
  assert.equal(mcpToolTitle('read_file'), 'read_file');
});

const W = 'file:///w';

test('the server list shows state, tool count, source and the reason', () => {
  assert.deepEqual(mcpServerRow({ workspaceUri: W, name: 'time', state: 'ready', toolCount: 2, tools: ['get_current_time', 'convert_time'], source: 'editor', transport: 'stdio' }), {
    label: '$(check) time', description: 'ready · 2 tools · editor · stdio', detail: 'tools: get_current_time, convert_time',
  });
  assert.deepEqual(mcpServerRow({ workspaceUri: W, name: 'git', state: 'needs-authorization', source: 'project', transport: 'stdio', reason: 'not trusted: denied' }), {
    label: '$(shield) git', description: 'needs authorization · project · stdio', detail: 'not trusted: denied',
  });
  assert.equal(mcpServerRow({ workspaceUri: W, name: 'web', state: 'failed', source: 'user', restarts: 5, reason: 'HTTP 401' }).description, 'failed · user · 5 restarts');
});

test('a server that waits for authorization can be authorized; one signed in with OAuth can sign out', () => {
  assert.deepEqual(mcpServerActions({ workspaceUri: W, source: 'user', name: 'web', state: 'needs-authorization', authorization: 'oauth', signedIn: false }), ['authorize']);
  assert.deepEqual(mcpServerActions({ workspaceUri: W, source: 'user', name: 'web', state: 'ready', authorization: 'oauth', signedIn: true }), ['authorize', 'logout']);
  assert.deepEqual(mcpServerActions({ workspaceUri: W, source: 'user', name: 'git', state: 'needs-authorization', authorization: 'trust' }), ['authorize']);
  assert.deepEqual(mcpServerActions({ workspaceUri: W, source: 'user', name: 'git', state: 'ready', authorization: 'trust' }), []);
  assert.deepEqual(mcpServerActions({ workspaceUri: W, source: 'user', name: 'time', state: 'ready' }), []);
  assert.deepEqual(mcpAuthorizedMessage({ workspaceUri: W, source: 'user', name: 'web', state: 'ready', toolCount: 1 }), { ok: true, text: "MCP server 'web' is ready · 1 tool." });
  assert.deepEqual(mcpAuthorizedMessage({ workspaceUri: W, source: 'user', name: 'web', state: 'needs-authorization', reason: 'access_denied' }), {
    ok: false, text: "MCP server 'web': needs authorization (access_denied)",
  });
});

test("the session picker lists a sub-agent's session right under its parent's", () => {
  const sessions = [
    { sessionId: 'new' },
    { sessionId: 'child-b', parentSessionId: 'parent', parentToolCallId: 'b' },
    { sessionId: 'fork', parentSessionId: 'parent' }, // a fork is a session of its own
    { sessionId: 'parent' },
    { sessionId: 'child-a', parentSessionId: 'parent', parentToolCallId: 'a' },
    { sessionId: 'orphan', parentSessionId: 'deleted', parentToolCallId: 'c' },
  ];
  assert.deepEqual(nestSessions(sessions).map(({ session, depth }) => [session.sessionId, depth]), [
    ['new', 0], ['fork', 0], ['parent', 0], ['child-b', 1], ['child-a', 1], ['orphan', 0],
  ]);
});
