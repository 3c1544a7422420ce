import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTranscript } from '../src/transcript';
import { costLabel, usageTooltip } from '../src/usage';

test("a turn's footer shows the server's turn total with its estimated cost, and the session's in the tooltip", () => {
  const usage = { inputTokens: 3000, outputTokens: 200, cacheReadTokens: 2000, cacheWriteTokens: 0, reasoningTokens: 50, costUsd: 0.0046 };
  const sessionUsage = { inputTokens: 4000, outputTokens: 300, cacheReadTokens: 2000, cacheWriteTokens: 0, reasoningTokens: 50, costUsd: 0.0074 };
  const events = [
    { seq: 0, time: 0, type: 'turn/start', data: { turn: 1 } },
    { seq: 1, time: 0, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' }, usage, sessionUsage } },
  ];
  const state = loadTranscript('s', events, 'idle');
  const end = state.items.find((i) => i.kind === 'turn-end');
  assert.ok(end && end.kind === 'turn-end');
  assert.deepEqual(end.usage, usage);
  assert.equal(costLabel(end.usage), ' · ~$0.0046 est.');
  const tooltip = usageTooltip(end.usage, end.sessionUsage);
  assert.match(tooltip, /3,000 in \(2,000 from the prompt cache\), 200 out \(50 reasoning\)/);
  assert.match(tooltip, /Session so far: 4,000 in, 300 out, ~\$0\.0074/);
  assert.match(tooltip, /estimates/);
});

test('a model without a known price shows tokens only and says which model', () => {
  const usage = { inputTokens: 500, outputTokens: 20, unpricedModels: ['local-coder'] };
  assert.equal(costLabel(usage), '');
  assert.match(usageTooltip(usage, usage), /No known price for local-coder/);
  assert.doesNotMatch(usageTooltip(usage, usage), /estimates/);
});
