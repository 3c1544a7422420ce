import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Batcher } from '../src/batcher';

test('a burst of pushes is delivered once, in order', () => {
  const ticks: (() => void)[] = [];
  const delivered: number[][] = [];
  const batcher = new Batcher<number>((items) => delivered.push(items), (fn) => ticks.push(fn));
  for (let i = 0; i < 200; i++) {
    batcher.push(i);
  }
  assert.equal(ticks.length, 1, 'one flush scheduled for the burst');
  ticks[0]();
  assert.equal(delivered.length, 1);
  assert.deepEqual(delivered[0], Array.from({ length: 200 }, (_, i) => i));
  batcher.push(200);
  assert.equal(ticks.length, 2);
  batcher.flush();
  ticks[1]();
  assert.deepEqual(delivered, [delivered[0], [200]], 'an explicit flush is not delivered twice');
});

test('clear drops what is pending', () => {
  const delivered: number[][] = [];
  const batcher = new Batcher<number>((items) => delivered.push(items), () => undefined);
  batcher.push(1, 2);
  batcher.clear();
  batcher.flush();
  assert.deepEqual(delivered, []);
});
