import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toastText } from '../src/toastText';

test('a notification shows code in quotes, not in raw backticks', () => {
  assert.equal(toastText('set `model.baseUrl` or run ``npm test``'), "set 'model.baseUrl' or run 'npm test'");
  assert.equal(toastText('no code here'), 'no code here');
  assert.equal(toastText('a lone ` stays'), 'a lone ` stays');
});
