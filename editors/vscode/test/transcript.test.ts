import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyEvents,
  applyToolProgress,
  changedSince,
  contextMeter,
  formatTokens,
  createTranscript,
  lastAssistantText,
  loadTranscript,
  Item,
  ToolItem,
} from '../src/transcript';
import { Log } from './events';

/** What a user sees, independent of keys and revs. */
function view(items: Item[]): unknown[] {
  return items.map((item) => {
    const { rev: _rev, ...rest } = item as any;
    return rest;
  });
}

test('a streamed answer becomes one text item that grows chunk by chunk', () => {
  const log = new Log();
  log.textTurn(1, 'hi', 'Hello **there**');
  const state = createTranscript('s1');
  const texts: string[] = [];
  for (const event of log.events) {
    applyEvents(state, [event]);
    const item = state.items.find((i) => i.kind === 'text');
    if (item && item.kind === 'text') {
      texts.push(item.text);
    }
  }
  assert.equal(state.items.filter((i) => i.kind === 'text').length, 1);
  assert.ok(texts.includes('Hel'), 'partial text visible while streaming');
  assert.equal(lastAssistantText(state), 'Hello **there**');
  const user = state.items.find((i) => i.kind === 'user');
  assert.equal(user && user.kind === 'user' ? user.text : '', 'hi');
  const end = state.items[state.items.length - 1];
  assert.equal(end.kind, 'turn-end');
  assert.equal(end.kind === 'turn-end' && end.reason, 'completed');
});

test('replaying the whole log in one batch gives the same view as live, event by event', () => {
  const log = new Log();
  log.textTurn(1, 'first', 'one');
  log.add('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id: 'm2', content: 'second' }] });
  log.add('turn/start', { turn: 2 });
  log.add('step/start', { turn: 2, step: 1 });
  log.add('user/message', { turn: 2, step: 1, message: { id: 'm2', content: [{ type: 'text', text: 'second' }] } });
  log.chunk(2, 1, { type: 'reasoning-start' });
  log.chunk(2, 1, { type: 'reasoning-delta', text: 'thinking' });
  log.chunk(2, 1, { type: 'reasoning-end' });
  log.chunk(2, 1, { type: 'tool-call-start', id: 'c1', name: 'edit_file' });
  log.chunk(2, 1, { type: 'tool-call-delta', id: 'c1', delta: '{"path":' });
  log.chunk(2, 1, { type: 'tool-call-delta', id: 'c1', delta: '"a.py"}' });
  log.chunk(2, 1, { type: 'tool-call-end', id: 'c1' });
  log.add('tool/call', { turn: 2, step: 1, callId: 'c1', name: 'edit_file', arguments: '{"path":"a.py"}' });
  log.add('tool/result', {
    turn: 2,
    step: 1,
    message: { role: 'tool', callId: 'c1', name: 'edit_file', content: [{ type: 'text', text: 'edited a.py' }], isError: false },
    meta: { diff: '@@ -1 +1 @@\n-a\n+b\n' },
  });
  log.add('turn/end', { turn: 2, reason: { kind: 'completed' } });

  const live = createTranscript('s');
  for (const event of log.events) {
    applyEvents(live, [event]);
  }
  const replay = loadTranscript('s', log.events, 'idle');
  assert.deepEqual(view(replay.items), view(live.items));
  assert.deepEqual(
    replay.items.map((i) => i.kind),
    ['user', 'text', 'turn-end', 'user', 'reasoning', 'tool', 'turn-end'],
  );
  const tool = replay.items.find((i) => i.kind === 'tool') as ToolItem;
  assert.equal(tool.status, 'done');
  assert.equal(tool.args, '{"path":"a.py"}');
  assert.equal(tool.output, 'edited a.py');
  const lastEnd = replay.items[replay.items.length - 1];
  assert.ok(lastEnd.kind === 'turn-end' && lastEnd.hasEdits, 'a turn that edited offers revert');
  const firstEnd = replay.items[2];
  assert.ok(firstEnd.kind === 'turn-end' && !firstEnd.hasEdits);
});

test('seen events are skipped and a hole in seq is reported', () => {
  const log = new Log();
  log.textTurn(1, 'hi', 'abc');
  const state = createTranscript('s');
  applyEvents(state, log.events.slice(0, 10));
  const again = applyEvents(state, log.events.slice(5, 12));
  assert.equal(again.applied, 2);
  assert.equal(again.gap, false);
  const hole = applyEvents(state, log.events.slice(14));
  assert.equal(hole.gap, true);
});

test('tool cards go running -> failed, and leftovers of an aborted turn are not left spinning', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('tool/call', { turn: 1, step: 1, callId: 'a', name: 'run_command', arguments: { command: 'make test' } });
  log.add('tool/call', { turn: 1, step: 1, callId: 'b', name: 'read_file', arguments: '{}' });
  const state = createTranscript('s');
  applyEvents(state, log.events);
  const a = state.items.find((i) => i.key === 'c:a') as ToolItem;
  assert.equal(a.status, 'running');
  assert.equal(a.args, '{"command":"make test"}');
  applyToolProgress(state, 'a', { stream: 'stdout', text: 'PASS 1\n' });
  applyToolProgress(state, 'a', { stream: 'stdout', text: 'PASS 2\n' });
  assert.equal(a.progress, 'PASS 1\nPASS 2\n');
  applyEvents(state, [
    log.add('tool/result', {
      turn: 1,
      step: 1,
      message: { callId: 'a', name: 'run_command', content: 'exit 2', isError: true },
      error: { code: 'EXIT', message: 'exit 2' },
    }),
    log.add('turn/end', { turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } }),
  ]);
  assert.equal(a.status, 'failed');
  assert.equal((state.items.find((i) => i.key === 'c:b') as ToolItem).status, 'dropped');
  const end = state.items[state.items.length - 1];
  assert.ok(end.kind === 'turn-end' && end.reason === 'aborted' && end.detail === 'cancelled');
});

test('a turn that failed shows the error where it happened', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.chunk(1, 1, { type: 'text-start' });
  log.chunk(1, 1, { type: 'text-delta', text: 'partial' });
  log.chunk(1, 1, { type: 'finish', kind: 'error', failure: { code: 'AUTH', message: 'bad key' } });
  log.add('turn/end', { turn: 1, reason: { kind: 'error', error: { code: 'AUTH', message: 'Set OPENAI_API_KEY' } } });
  const state = loadTranscript('s', log.events, 'idle');
  const kinds = state.items.map((i) => i.kind);
  assert.deepEqual(kinds, ['text', 'error', 'turn-end']);
  const err = state.items[1];
  assert.ok(err.kind === 'error' && err.code === 'AUTH' && err.message === 'Set OPENAI_API_KEY');
  const text = state.items[0];
  assert.ok(text.kind === 'text' && !text.streaming);
});

test('the queue follows the inbox splices: queued, removed, claimed', () => {
  const log = new Log();
  const m = (id: string) => ({ id, content: [{ type: 'text', text: id }] });
  log.add('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [m('a')] });
  log.add('agent/inbox/spliced', { target: 'next-turn', start: 1, inserted: [m('b')] });
  log.add('agent/inbox/spliced', { target: 'next-turn', start: 2, inserted: [m('c')] });
  log.add('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [m('s')] });
  const state = createTranscript('s');
  applyEvents(state, log.events);
  assert.deepEqual(state.inbox.nextTurn.map((x) => x.id), ['a', 'b', 'c']);
  assert.deepEqual(state.inbox.nextStep.map((x) => x.id), ['s']);
  applyEvents(state, [log.add('agent/inbox/spliced', { target: 'next-turn', start: 1, removedCount: 1, inserted: [], outcome: 'canceled' })]);
  assert.deepEqual(state.inbox.nextTurn.map((x) => x.id), ['a', 'c']);
  applyEvents(state, [
    log.add('agent/inbox/spliced', { target: 'next-step', start: 0, removedCount: 1, inserted: [] }),
    log.add('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }),
  ]);
  assert.deepEqual(state.inbox.nextTurn.map((x) => x.id), ['c']);
  assert.deepEqual(state.inbox.nextStep, []);
});

test('the context meter shows the fixed prompt from the first request on, before any answer', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('request/context', { provider: 'openai', model: 'local', contextWindow: 4096, fixedTokens: 1189 });
  const state = loadTranscript('s', log.events, 'running');
  assert.deepEqual(contextMeter(state), { used: 1189, window: 4096, percent: 29, fixed: 1189 });
});

test('the context meter uses the last call, not a running total', () => {
  const log = new Log();
  log.textTurn(1, 'a', 'x');
  log.textTurn(2, 'b', 'y');
  const state = loadTranscript('s', log.events, 'idle');
  assert.deepEqual(contextMeter(state), { used: 120, window: 1000, percent: 12, fixed: null });
  assert.equal(contextMeter(createTranscript()), null);
});

test('a message without chunks behind it is still shown', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('assistant/message', {
    turn: 1,
    step: 1,
    message: { role: 'assistant', content: [{ type: 'reasoning', text: 'r' }, { type: 'text', text: 'summary' }] },
    sourceEventSeqs: [],
  });
  const state = loadTranscript('s', log.events, 'idle');
  assert.deepEqual(
    state.items.map((i) => [i.kind, (i as any).text]),
    [['reasoning', 'r'], ['text', 'summary']],
  );
});

test("text meant for the model after a review undo or a skill is shown as its note, not as the user's words", () => {
  const log = new Log();
  log.add('user/message', { turn: null, step: null, message: { role: 'user', id: 'u1', source: 'user',
    content: [{ type: 'text', text: 'The user rejected this change of yours… Do not make this change again' }],
    note: { kind: 'undo', text: '↶ you undid a change in stats.py' } } });
  log.add('user/message', { turn: 1, step: 1, message: { role: 'user', id: 'u2', source: 'user',
    content: [{ type: 'text', text: 'fix it' }] } });
  const state = loadTranscript('s', log.events, 'idle');
  const users = state.items.filter((i) => i.kind === 'user') as any[];
  assert.deepEqual(users.map((u) => u.note), [{ kind: 'undo', text: '↶ you undid a change in stats.py' }, null]);
  assert.equal(users[1].text, 'fix it');
});

test('only changed items are reported to the renderer', () => {
  const log = new Log();
  log.textTurn(1, 'hi', 'abc');
  const state = createTranscript('s');
  applyEvents(state, log.events.slice(0, 9));
  const rev = state.rev;
  applyEvents(state, log.events.slice(9, 10));
  assert.deepEqual(changedSince(state, rev).map((i) => i.kind), ['text']);
});

test('deltas the server merged under load (one event spanning seq..lastSeq) are not a hole', () => {
  const log = new Log();
  log.textTurn(1, 'hi', 'abcdef');
  const events = log.events;
  const firstDelta = events.findIndex((e) => e.data.chunk?.type === 'text-delta');
  const merged = { ...events[firstDelta], lastSeq: events[firstDelta + 5].seq, data: { ...events[firstDelta].data, chunk: { type: 'text-delta', text: 'abcdef' } } };
  const wire = [...events.slice(0, firstDelta), merged, ...events.slice(firstDelta + 6)];
  const state = createTranscript('s');
  let gap = false;
  for (const event of wire) {
    gap ||= applyEvents(state, [event]).gap;
  }
  assert.equal(gap, false);
  assert.equal(lastAssistantText(state), 'abcdef');
  assert.deepEqual(view(state.items), view(loadTranscript('s', events, 'idle').items));
});

test("a turn's footer counts the tokens of all its model calls; the meter shows the last call", () => {
  const log = new Log();
  log.textTurn(1, 'one', 'a');
  log.add('turn/start', { turn: 2 });
  for (const step of [1, 2]) {
    log.add('assistant/message', { turn: 2, step, message: { role: 'assistant', content: [] }, usage: { inputTokens: 200 * step, outputTokens: 10 }, sourceEventSeqs: [1] });
  }
  log.add('turn/end', { turn: 2, reason: { kind: 'completed' } });
  const state = loadTranscript('s', log.events, 'idle');
  const ends = state.items.filter((i) => i.kind === 'turn-end');
  assert.deepEqual(
    ends.map((e) => (e.kind === 'turn-end' ? e.usage : null)),
    [
      { inputTokens: 100, outputTokens: 20 },
      { inputTokens: 600, outputTokens: 20 },
    ],
  );
  assert.deepEqual(contextMeter(state), { used: 410, window: 1000, percent: 41, fixed: null });
});

test('a compaction shows as one item with its summary; the checkpoint message and pruned copies are not repeated', () => {
  const log = new Log();
  log.textTurn(1, 'first', 'answer');
  log.add('turn/start', { turn: 2 });
  log.add('tool/call', { turn: 2, step: 1, callId: 'c1', name: 'run_command', arguments: '{"command":"ls"}' });
  log.add('tool/result', { turn: 2, step: 1, callId: 'c1', message: { callId: 'c1', content: [{ type: 'text', text: 'full output' }] } });
  log.add('turn/end', { turn: 2, reason: { kind: 'completed' } });
  const before = loadTranscript('s', log.events, 'idle').items.length;
  log.add('compaction/prune', { seq: 3, tokensBefore: 100, tokensAfter: 10 });
  log.add('tool/result', { turn: 2, step: 1, callId: 'c1', message: { callId: 'c1', content: [{ type: 'text', text: 'pruned' }] }, surfaceOp: { kind: 'replace', start: 3, end: 3 } });
  log.add('compaction/start', { compactionId: 'k1', turn: null });
  log.add('compaction/summary', { compactionId: 'k1', summary: 'They said hi.', shadowedTokenCount: 1500 });
  log.add('user/message', { turn: null, step: null, message: { role: 'user', id: 'cp', source: 'compaction', content: [{ type: 'text', text: '[RECOVERY CHECKPOINT] They said hi.' }] }, surfaceOp: { kind: 'replace', start: 0, end: 9 } });
  log.add('compaction/end', { compactionId: 'k1', turn: null });
  const state = loadTranscript('s', log.events, 'idle');
  assert.equal(state.items.length, before + 1);
  const item = state.items[state.items.length - 1];
  assert.ok(item.kind === 'compaction');
  assert.equal(item.status, 'done');
  assert.equal(item.summary, 'They said hi.');
  assert.equal(item.tokens, 1500);
  const tool = state.items.find((i) => i.kind === 'tool');
  assert.equal(tool && tool.kind === 'tool' ? tool.output : '', 'full output');
});

test('a failed compaction says so', () => {
  const log = new Log();
  log.add('compaction/start', { compactionId: 'k1', turn: null });
  log.add('compaction/end', { compactionId: 'k1', turn: null, error: { kind: 'summary', message: 'the model failed' } });
  const [item] = loadTranscript('s', log.events, 'idle').items;
  assert.ok(item.kind === 'compaction' && item.status === 'failed' && item.error === 'the model failed');
});

test('token counts are short', () => {
  assert.deepEqual([950, 15_300, 128_000, 200_000, 1_048_576].map(formatTokens), ['950', '15.3k', '128k', '200k', '1M']);
});

test('a call id reused in a later turn (a restarted server) gets its own tool card', () => {
  const log = new Log();
  for (const turn of [1, 2]) {
    log.add('turn/start', { turn });
    log.add('tool/call', { turn, step: 1, callId: 'call_1', name: 'edit_file', arguments: `{"path":"f${turn}.py"}` });
    log.add('tool/result', { turn, step: 1, callId: 'call_1', message: { callId: 'call_1', content: [{ type: 'text', text: `out ${turn}` }] } });
    log.add('turn/end', { turn, reason: { kind: 'completed' } });
  }
  const state = loadTranscript('s', log.events, 'idle');
  const tools = state.items.filter((i): i is ToolItem => i.kind === 'tool');
  assert.deepEqual(tools.map((t) => [t.turn, t.output]), [[1, 'out 1'], [2, 'out 2']]);
  assert.notEqual(tools[0].key, tools[1].key);
  assert.ok(state.items.filter((i) => i.kind === 'turn-end').every((e) => e.kind === 'turn-end' && e.hasEdits));
  applyToolProgress(state, 'call_1', { text: 'live' });
  assert.equal(tools[1].progress, 'live');
});

test("a user message shows what the user typed; the context blocks the model gets are chips", () => {
  const log = new Log();
  const uri = 'file:///ws/hello.py';
  const message = {
    role: 'user',
    id: 'm1',
    content: [{ type: 'text', text: 'see @hello.py' }, { type: 'text', text: `<context>\n{"kind": "file", "uri": "${uri}"}\n</context>` }],
    context: [{ kind: 'file', uri }],
  };
  log.add('turn/start', { turn: 1 });
  log.add('user/message', { turn: 1, step: 1, message });
  const [item] = loadTranscript('s', log.events, 'running').items;
  assert.ok(item.kind === 'user');
  assert.equal(item.text, 'see @hello.py');
  assert.deepEqual(item.context, [{ kind: 'file', uri }]);
});

test('any tool whose result carries journal records makes its turn revertible', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'rename_symbol', arguments: '{}' });
  log.add('tool/result', { turn: 1, step: 1, callId: 'c1', message: { callId: 'c1', content: [] }, meta: { journal: [{ op: 'edit', path: '/ws/a.py' }] } });
  log.add('turn/end', { turn: 1, reason: { kind: 'completed' } });
  log.add('turn/start', { turn: 2 });
  log.add('tool/call', { turn: 2, step: 1, callId: 'c2', name: 'grep', arguments: '{}' });
  log.add('tool/result', { turn: 2, step: 1, callId: 'c2', message: { callId: 'c2', content: [] }, meta: { journal: [] } });
  log.add('turn/end', { turn: 2, reason: { kind: 'completed' } });
  const ends = loadTranscript('s', log.events, 'idle').items.filter((i) => i.kind === 'turn-end');
  assert.deepEqual(ends.map((e) => e.kind === 'turn-end' && e.hasEdits), [true, false]);
});

test('a steered message is marked as steering, a followup is not', () => {
  const log = new Log();
  log.textTurn(1, 'first', 'ok');
  log.add('user/message', {
    turn: 1,
    step: 2,
    message: { role: 'user', id: 'm2', source: 'user', delivery: 'steer', content: [{ type: 'text', text: 'focus' }] },
  });
  const state = createTranscript('s1');
  applyEvents(state, log.events);
  const users = state.items.filter((i) => i.kind === 'user');
  assert.deepEqual(users.map((u) => (u.kind === 'user' ? [u.text, u.steer] : null)), [['first', false], ['focus', true]]);
});

test('a queued message moved into the running turn ("Steer now") is steering too; one that starts a turn is not', () => {
  const log = new Log();
  const queued = (id: string, text: string) => ({ role: 'user', id, source: 'user', content: [{ type: 'text', text }] });
  log.add('turn/start', { turn: 1 });
  log.add('user/message', { turn: 1, step: 1, message: queued('m1', 'steered while idle') });
  log.add('user/message', { turn: 1, step: 2, message: queued('m2', 'moved in') });
  log.add('user/message', { turn: 1, step: 2, message: { ...queued('m3', 'a plugin note'), delivery: 'inject' } });
  const users = loadTranscript('s', log.events, 'idle').items.filter((i) => i.kind === 'user');
  assert.deepEqual(users.map((u) => (u.kind === 'user' ? [u.text, u.steer] : null)), [['steered while idle', false], ['moved in', true], ['a plugin note', false]]);
});

test('a logged turn/revert is the turn\'s revert result, live and on replay alike', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'edit_file', arguments: '{"path":"a.py"}' });
  log.add('tool/result', { turn: 1, step: 1, callId: 'c1', message: { callId: 'c1', content: [] }, meta: { diff: '-x\n+y' } });
  log.add('turn/end', { turn: 1, reason: { kind: 'completed' } });
  const live = createTranscript('s');
  applyEvents(live, log.events);
  assert.equal(live.reverts.size, 0, 'not reverted yet: the turn still offers "Revert this turn"');
  const end = live.items.find((i) => i.kind === 'turn-end')!;
  const revBefore = end.rev;
  // Reverted from another client: arrives as a live session/event.
  const revert = log.add('turn/revert', { turn: 1, reverted: ['/ws/a.py'], skipped: [{ path: '/ws/b.py', reason: 'changed since the agent wrote it' }] });
  applyEvents(live, [revert]);
  const expected = { reverted: ['/ws/a.py'], skipped: [{ path: '/ws/b.py', reason: 'changed since the agent wrote it' }] };
  assert.deepEqual(live.reverts.get(1), expected);
  assert.ok(end.rev > revBefore, 'the turn footer is redrawn with the result');
  assert.deepEqual(changedSince(live, revBefore).map((i) => i.kind), ['turn-end']);
  const replayed = loadTranscript('s', log.events, 'idle');
  assert.deepEqual(replayed.reverts.get(1), expected);
  assert.deepEqual(view(replayed.items), view(live.items));
});

test('a second logged revert of a turn adds what it reverted to the first', () => {
  const log = new Log();
  log.add('turn/start', { turn: 3 });
  log.add('turn/revert', { turn: 3, reverted: ['/ws/a.py'], skipped: [] });
  log.add('tool/call', { turn: 3, step: 2, callId: 'c1', name: 'write_file', arguments: '{}' });
  log.add('turn/end', { turn: 3, reason: { kind: 'completed' } });
  log.add('turn/revert', { turn: 3, reverted: ['/ws/c.py'], skipped: [{ path: '/ws/d.py', reason: 'deleted by the user' }] });
  const state = loadTranscript('s', log.events, 'idle');
  assert.deepEqual(state.reverts.get(3), { reverted: ['/ws/a.py', '/ws/c.py'], skipped: [{ path: '/ws/d.py', reason: 'deleted by the user' }] });
  const end = state.items.find((i) => i.kind === 'turn-end');
  assert.ok(end && end.kind === 'turn-end' && end.hasEdits);
});

test('a command that exited non-zero is a failed card, not a done one', () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'run_command', arguments: '{"command":"false"}' });
  log.add('tool/result', { turn: 1, step: 1, callId: 'c1', message: { callId: 'c1', content: [{ type: 'text', text: 'exit code 1' }] }, meta: { exitCode: 1 } });
  log.add('tool/call', { turn: 1, step: 1, callId: 'c2', name: 'run_command', arguments: '{"command":"true"}' });
  log.add('tool/result', { turn: 1, step: 1, callId: 'c2', message: { callId: 'c2', content: [{ type: 'text', text: '' }] }, meta: { exitCode: 0 } });
  const tools = loadTranscript('s', log.events, 'idle').items.filter((i) => i.kind === 'tool') as ToolItem[];
  assert.deepEqual(tools.map((t) => t.status), ['failed', 'done']);
});

test("a step's retries are one notice updated in place, not a line each", () => {
  const log = new Log();
  log.add('turn/start', { turn: 1 });
  log.add('step/start', { turn: 1, step: 1 });
  for (const retry of [1, 2, 3]) {
    log.add('llm/retry', { retryId: `r${retry}`, turn: 1, step: 1, retry, delayMs: 500 * 2 ** retry, failure: { code: 'OVERLOADED', message: 'busy' } });
  }
  const state = createTranscript('s1');
  applyEvents(state, log.events);
  const notices = state.items.filter((i) => i.kind === 'notice');
  assert.deepEqual(notices.map((n) => n.kind === 'notice' && n.text), ['Retrying (retry 3) in 4.0 s after OVERLOADED: busy']);
  assert.deepEqual(view(loadTranscript('s1', log.events, 'idle').items), view(state.items));
});
