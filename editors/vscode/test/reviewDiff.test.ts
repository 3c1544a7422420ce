import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deletedNote, replacedMarkdown, textBeforeHunks } from '../src/reviewDiff';
import type { PendingHunkInfo } from '../src/protocol';

function hunk(start: number, end: number, oldText: string, newText: string): PendingHunkInfo {
  return { sessionId: 's', hunkId: `c.${start}`, callId: 'c', turn: 2, uri: 'file:///w/a.py', oldText, newText,
    range: { start: { line: start, character: 0 }, end: { line: end, character: 0 } } };
}

test("the diff's left side is the file with its pending changes put back, deletions included", () => {
  const now = 'a\nB\nB2\nc\ne\n';
  const hunks = [hunk(1, 3, 'b\n', 'B\nB2\n'), hunk(4, 4, 'd\n', '')];
  assert.equal(textBeforeHunks(now, hunks), 'a\nb\nc\nd\ne\n');
  assert.equal(textBeforeHunks('x\n', []), 'x\n');
});

test('a change that only deleted lines says so where they were; the hover shows what a change replaced', () => {
  assert.equal(deletedNote(hunk(4, 4, '    return d\nmore\n', '')), ' ⌫ the agent deleted 2 lines: return d …');
  assert.equal(deletedNote(hunk(1, 3, 'b\n', 'B\n')), null);
  assert.match(replacedMarkdown(hunk(1, 3, 'b\n', 'B\n')), /It replaced:\n\n```\nb\n```/);
  assert.match(replacedMarkdown(hunk(1, 2, '', 'new\n')), /added lines/);
});
