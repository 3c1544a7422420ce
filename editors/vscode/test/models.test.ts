import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTranscript } from '../src/transcript';
import { modelPick } from '../src/models';

test('a session/model event names the new model in the header and in the transcript', () => {
  const events = [
    { seq: 0, time: 0, type: 'request/context', data: { provider: 'openai', model: 'house-model', contextWindow: 8000 } },
    { seq: 1, time: 0, type: 'session/model',
      data: { provider: 'openai', model: 'gpt-4o', effort: 'high', previousProvider: 'openai', previousModel: 'house-model' } },
  ];
  const state = loadTranscript('s', events, 'idle');
  assert.equal(state.model, 'openai / gpt-4o');
  const notice = state.items.find((i) => i.kind === 'notice');
  assert.ok(notice && notice.kind === 'notice');
  assert.equal(notice.text, 'Model: openai / gpt-4o, effort high from the next step (was house-model).');
});

test('the picker labels a model by name, with its provider, source, window and whether it is current', () => {
  assert.deepEqual(modelPick({ provider: 'openai', model: 'gpt-4o', source: 'endpoint', contextWindow: 128000 }, 'openai / gpt-4o'), {
    label: 'gpt-4o',
    description: 'openai · endpoint · 128k tokens · current',
  });
  assert.deepEqual(modelPick({ provider: 'anthropic', model: 'claude-x', source: 'configured' }, null), {
    label: 'claude-x',
    description: 'anthropic · configured',
  });
});
