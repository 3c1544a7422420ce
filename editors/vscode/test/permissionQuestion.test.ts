import { test } from 'node:test';
import assert from 'node:assert/strict';
import { permissionQuestion } from '../src/permissionQuestion';

test('the question names the exact command', () => {
  const q = permissionQuestion({ tool: 'run_command', kind: 'command', title: 'Run `rm -rf build`', command: 'rm -rf build', detail: 'in /ws' });
  assert.equal(q.message, 'The agent wants to run rm -rf build');
  assert.doesNotMatch(q.detail, /Run `rm -rf build`/, "not repeated");
  assert.match(q.detail, /in \/ws/);
  assert.match(q.detail, /Tool: run_command/);
});

test('the question names the exact path', () => {
  const q = permissionQuestion({ tool: 'delete_file', kind: 'delete', title: 'Delete src/old.py', path: 'src/old.py' });
  assert.equal(q.message, 'The agent wants to delete src/old.py');
});

test('the detail does not repeat the command', () => {
  const q = permissionQuestion({ tool: 'run_command', kind: 'command', title: 'Run `echo hi`', command: 'echo hi', detail: 'echo hi' });
  assert.equal(q.message, 'The agent wants to run echo hi');
  assert.equal(q.detail, 'Tool: run_command');
});

test('a rename names both paths', () => {
  const q = permissionQuestion({ tool: 'rename_file', kind: 'write', title: 'Rename a.py to b.py', path: '/ws/a.py', detail: 'a.py -> b.py' });
  assert.equal(q.message, 'The agent wants to write /ws/a.py');
  assert.match(q.detail, /Rename a.py to b.py/);
});

test('a command the server always confirms offers only once and deny, and says why', () => {
  const q = permissionQuestion({
    tool: 'run_command', kind: 'command', title: 'Run `rm -rf build`', command: 'rm -rf build',
    choices: ['once', 'deny'], asksEveryTime: 'Always confirmed: this command is a recursive delete, so an answer is never remembered for it.',
  });
  assert.deepEqual(q.answers, ['once', 'deny']);
  assert.match(q.detail, /Always confirmed: this command is a recursive delete/);
});

test('a question without choices (an older server) offers every answer', () => {
  const q = permissionQuestion({ tool: 'run_command', kind: 'command', title: 'Run `ls`', command: 'ls' });
  assert.deepEqual(q.answers, ['once', 'session', 'always', 'deny']);
});

test('an edit waiting for approval (edits.review "ask") shows its diff and offers only allow once and deny', () => {
  const diff = '--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
  const q = permissionQuestion({
    tool: 'edit_file', kind: 'write', title: 'Apply this edit to app.py?', path: '/ws/app.py', choices: ['once', 'deny'], diff,
    asksEveryTime: 'Every edit waits for your approval (the "edits.review" setting is "ask").',
  });
  assert.equal(q.diff, diff); // drawn apart, coloured, with "Open in diff editor"
  assert.ok(!q.detail.includes('-x = 1'), q.detail);
  assert.deepEqual(q.answers, ['once', 'deny']);
});

test("an MCP tool's question reads as one sentence, its verb not doubled", () => {
  const q = permissionQuestion({ sessionId: 's', tool: 'mcp__web__fetch', kind: 'command', choices: ['once', 'deny'],
    title: "Run the MCP tool fetch of server 'web'" } as any);
  assert.equal(q.message, "The agent wants to run the MCP tool fetch of server 'web'");
  assert.ok(!q.detail.includes('Run the MCP tool'), q.detail);
});
