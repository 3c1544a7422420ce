import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { diffSides, reverseApply } from '../src/diff';

const before = 'def f():\n    return 1\n\n\nprint(f())\n';
const after = 'def f():\n    return 2\n\n\nprint(f())\nprint("done")\n';
const diff = [
  '--- a/m.py',
  '+++ b/m.py',
  '@@ -1,3 +1,3 @@',
  ' def f():',
  '-    return 1',
  '+    return 2',
  ' ',
  '@@ -4,2 +4,3 @@',
  '',
  ' print(f())',
  '+print("done")',
  '',
].join('\n');

test('the text before an edit is recovered from the file and its diff', () => {
  assert.equal(reverseApply(after, diff), before);
});

test('a file that changed since the edit does not match its diff', () => {
  assert.equal(reverseApply(after.replace('return 2', 'return 3'), diff), null);
  assert.equal(reverseApply(after, 'not a diff'), null);
});

test('a new file reverses to empty', () => {
  assert.equal(reverseApply('a\nb\n', '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n'), '');
});

test('diffs as the server writes them (Python difflib, with "\\ No newline at end of file") reverse exactly', () => {
  // [before, after, diff] triples made by agent_lsp.tools.edit.unified_diff.
  const cases: [string, string, string][] = JSON.parse(
    readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'difflib_cases.json'), 'utf8'),
  );
  assert.ok(cases.length >= 3);
  for (const [before, after, diff] of cases) {
    assert.equal(reverseApply(after, diff), before);
  }
});

test('without the file, both sides come from the diff, each hunk at its own line', () => {
  const sides = diffSides(diff)!;
  // lines 1-3 and 4-5 before; 1-3 and 4-6 after (the diff holds every line of this small file)
  assert.equal(sides.before, before);
  assert.equal(sides.after, after);
});

test('lines between hunks that the diff does not hold are left empty, so line numbers stay right', () => {
  const sides = diffSides('@@ -10,1 +10,1 @@\n-old\n+new\n')!;
  assert.equal(sides.before.split('\n')[9], 'old');
  assert.equal(sides.after.split('\n')[9], 'new');
  assert.equal(diffSides('no hunks'), null);
});
