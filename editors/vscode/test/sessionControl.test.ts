import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTranscript } from '../src/transcript';

test('a rewind is a line in the transcript and a paused queue is remembered until it is resumed', () => {
  const events = [
    { seq: 0, time: 0, type: 'session/rewind', data: { turn: 2, surfaceOp: { kind: 'replace' }, removedSeqs: [] } },
    { seq: 1, time: 0, type: 'agent/inbox/paused', data: { paused: true } },
  ];
  const state = loadTranscript('s', events, 'idle');
  const notice = state.items.find((i) => i.kind === 'notice');
  assert.ok(notice && notice.kind === 'notice');
  assert.equal(notice.text, 'Rewound to before turn 2: the agent no longer sees it or what followed.');
  assert.equal(state.queuePaused, true);
  const resumed = loadTranscript('s', [...events, { seq: 2, time: 0, type: 'agent/inbox/paused', data: { paused: false } }], 'idle');
  assert.equal(resumed.queuePaused, false);
});
