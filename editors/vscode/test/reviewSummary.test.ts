import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reviewFiles, reviewHeadline } from '../src/reviewSummary';
import type { PendingHunkInfo } from '../src/protocol';

function hunk(uri: string, line: number): PendingHunkInfo {
  return { sessionId: 's', hunkId: `c.${line}`, callId: 'c', turn: 1, uri, oldText: 'a\n', newText: 'b\n',
    range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } } };
}

test('the panel lists each changed file once with its count, and says how many wait', () => {
  const files = reviewFiles([hunk('file:///w/a.py', 1), hunk('file:///w/b.py', 3), hunk('file:///w/a.py', 9)],
    (uri) => uri.replace('file:///w/', ''));
  assert.deepEqual(files.map((f) => [f.label, f.changes]), [['a.py', 2], ['b.py', 1]]);
  assert.equal(reviewHeadline(files), '3 changes in 2 files wait for review');
  assert.equal(reviewHeadline(files.slice(1)), '1 change in 1 file waits for review');
});
