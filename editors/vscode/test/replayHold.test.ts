import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayHold } from '../src/replay';

test('a turn that ends while its session is replayed is shown idle, not running as the last page said', () => {
  const hold = new ReplayHold('s');
  hold.pageArrived();
  hold.statusChanged('running'); // older than the next page
  hold.pageArrived(); // the last page, answered while the turn still ran
  hold.statusChanged('idle'); // the turn ended after that answer
  assert.equal(hold.finalStatus('running'), 'idle');
});

test('a status that came before the last page is older than what that page says', () => {
  const hold = new ReplayHold('s');
  hold.statusChanged('idle');
  hold.pageArrived();
  assert.equal(hold.finalStatus('running'), 'running');
  assert.equal(new ReplayHold('s').finalStatus(undefined), undefined);
});
