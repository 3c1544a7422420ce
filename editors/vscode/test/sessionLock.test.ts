import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_IN_USE, heldByOf, heldNeedsReload, heldNotice, sessionInUse } from '../src/sessionLock';

// What vscode-languageclient rejects with for a JSON-RPC error answer.
class ResponseError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

test('a -32010 answer names the session and the pid of the other process', () => {
  const error = new ResponseError(SESSION_IN_USE, 'session s_1 is open in another agent-lsp process 4242 (lock /x/s_1.lock)', { sessionId: 's_1', pid: 4242 });
  assert.deepEqual(sessionInUse(error), { sessionId: 's_1', pid: 4242 });
});

test('a -32010 without a readable pid still counts; other errors do not', () => {
  assert.deepEqual(sessionInUse(new ResponseError(SESSION_IN_USE, 'in use', { sessionId: 's_1', pid: null })), { sessionId: 's_1', pid: null });
  assert.deepEqual(sessionInUse(new ResponseError(SESSION_IN_USE, 'in use')), { sessionId: null, pid: null });
  assert.equal(sessionInUse(new ResponseError(-32602, 'unknown session s_1', { sessionId: 's_1', pid: 1 })), null);
  assert.equal(sessionInUse(new Error('the agent_lsp server is not running')), null);
  assert.equal(sessionInUse(undefined), null);
});

test('a load answer with heldByPid is read-only; without it, or null, it is ours', () => {
  assert.deepEqual(heldByOf('s_1', { heldByPid: 77 }), { sessionId: 's_1', pid: 77 });
  assert.deepEqual(heldByOf('s_1', { heldByPid: 0 }), { sessionId: 's_1', pid: null }, '0: the pid could not be read');
  assert.equal(heldByOf('s_1', {}), null);
  assert.equal(heldByOf('s_1', { heldByPid: null }), null);
});

test('the notice says where it is open, that it is read-only, and how to continue', () => {
  assert.equal(heldNotice(4242), 'This session is open in another window (pid 4242) — read-only; start a new session to continue.');
  assert.equal(heldNotice(null), 'This session is open in another window — read-only; start a new session to continue.');
});

test('a snapshot of a session held elsewhere says when it was read and that a turn runs there', () => {
  const asOf = new Date(2026, 11, 8, 9, 5, 7).getTime();
  assert.equal(heldNotice(7, { asOf, endSeq: 40, running: true }),
    'A snapshot as of 09:05:07 of a session open in another window (pid 7), where a turn is running: this view follows it every few seconds — read-only; start a new session to continue.');
  assert.equal(heldNotice(null, { asOf, endSeq: 40, running: false }),
    'A snapshot as of 09:05:07 of a session open in another window — read-only; start a new session to continue.');
});

test('the held snapshot is read again when a turn starts or ends there, or it was let go', () => {
  const snapshot = { asOf: 0, endSeq: 40, running: true };
  assert.equal(heldNeedsReload(snapshot, { status: 'running', heldByPid: 7 }), false, 'it only grew: applied as it comes');
  assert.equal(heldNeedsReload(snapshot, { status: 'idle', heldByPid: 7 }), true);
  assert.equal(heldNeedsReload(snapshot, { status: 'running', heldByPid: null }), true);
  assert.equal(heldNeedsReload({ ...snapshot, running: false }, { status: 'running', heldByPid: 7 }), true);
  assert.equal(heldNeedsReload({ ...snapshot, running: false }, { status: 'idle', heldByPid: 7 }), false);
});
