import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stderrLevels } from '../src/serverLog';

test("the server's stderr lines keep the level it logged them at", () => {
  const level = stderrLevels();
  const lines = [
    '2026-12-07 21:00:00,123 WARNING agent_lsp.llm: the model answered slowly',
    '2026-12-07 21:00:01,000 INFO agent_lsp.lsp: started',
    '2026-12-07 21:00:02,000 ERROR agent_lsp.agent: the turn failed',
    'Traceback (most recent call last):',
    '  File "x.py", line 1',
    '2026-12-07 21:00:03,000 DEBUG agent_lsp.x: detail',
  ];
  assert.deepEqual(lines.map(level), ['warn', 'info', 'error', 'error', 'error', 'debug']);
  assert.equal(stderrLevels()('Segmentation fault'), 'error');
});
