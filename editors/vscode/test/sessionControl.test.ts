import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTranscript } from '../src/transcript';
import { Log } from './events';

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

test('a rewind dims the turns it cut off, live and replayed alike; turns after it are live', () => {
  const log = new Log();
  log.textTurn(1, 'one', 'first answer');
  log.textTurn(2, 'two', 'second answer');
  log.textTurn(3, 'three', 'third answer');
  log.add('session/rewind', { turn: 2, surfaceOp: { kind: 'replace' }, removedSeqs: [] });
  log.textTurn(2, 'two again', 'a new second answer');
  const state = loadTranscript('s', log.events, 'idle');
  const seen = state.items.map((i) => `${i.kind}:${i.kind === 'user' || i.kind === 'text' ? i.text : i.turn}${i.rewound ? ' (rewound)' : ''}`);
  assert.deepEqual(seen, [
    'user:one',
    'text:first answer',
    'turn-end:1',
    'user:two (rewound)',
    'text:second answer (rewound)',
    'turn-end:2 (rewound)',
    'user:three (rewound)',
    'text:third answer (rewound)',
    'turn-end:3 (rewound)',
    'notice:null',
    'user:two again',
    'text:a new second answer',
    'turn-end:2',
  ]);
});
