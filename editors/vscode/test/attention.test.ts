import { test } from 'node:test';
import assert from 'node:assert/strict';
import { questionLine, turnEndLine } from '../src/attentionLine';

test('a user who looked away is told how the last turn among the events ended', () => {
  assert.equal(turnEndLine([{ type: 'assistant/chunk' }]), undefined);
  assert.equal(turnEndLine([{ type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }]),
    "The agent's turn finished.");
  assert.equal(turnEndLine([
    { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
    { type: 'turn/end', data: { turn: 2, reason: { kind: 'error', error: { code: 'AUTH', message: 'the key was refused' } } } },
  ]), "The agent's turn failed: the key was refused.");
  assert.equal(turnEndLine([{ type: 'turn/end', data: { reason: 'aborted' } }]), "The agent's turn was cancelled.");
});

test('a waiting question is named on one short line', () => {
  assert.equal(questionLine('Run `npm test`'), 'The agent waits for you: Run `npm test`');
  assert.equal(questionLine(undefined), 'The agent waits for you.');
  const long = questionLine(`Run ${'x'.repeat(300)}\nnext`);
  assert.ok(long.length < 160 && long.endsWith('…') && !long.includes('\n'));
});
