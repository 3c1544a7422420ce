import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argumentHint, filterSlash, menuKey, moveSelection, parseSlashLine, promptArguments, slashItems, slashQuery } from '../src/slashMenu';

const review = { server: 'web', name: 'review', description: 'Review one file', arguments: [{ name: 'path', required: true }, { name: 'focus', required: false }] };
const items = slashItems(
  [
    { name: 'release-notes', description: 'Write the release notes' },
    { name: 'compact', description: 'a skill named like a command' },
  ],
  [review, { server: 'git', name: 'summary' }],
);
const names = (list: { name: string }[]) => list.map((i) => i.name);

test('the menu: the panel commands, then skills (not one named like a command), then server:prompt', () => {
  assert.deepEqual(names(items), ['new', 'resume', 'compact', 'revert', 'model', 'mcp', 'permissions', 'release-notes', 'web:review', 'git:summary']);
  assert.equal(items.find((i) => i.name === 'compact')?.kind, 'command');
  assert.equal(items.find((i) => i.name === 'git:summary')?.description, '');
  assert.deepEqual(items.find((i) => i.name === 'git:summary')?.arguments, []);
});

test('the menu opens for a slash word alone with the caret at its end', () => {
  assert.equal(slashQuery('/', 1), '');
  assert.equal(slashQuery('/rev', 4), 'rev');
  assert.equal(slashQuery('/rev', 2), null); // editing inside the word
  assert.equal(slashQuery('/web:review src/a.py', 20), null); // typing arguments
  assert.equal(slashQuery('see /rev', 8), null);
  assert.equal(slashQuery('', 0), null);
});

test('filtering: name prefix first, then a part of the name, then anywhere in it; no match, nothing', () => {
  assert.deepEqual(names(filterSlash(items, '')), names(items));
  assert.deepEqual(names(filterSlash(items, 're')), ['resume', 'revert', 'release-notes', 'web:review']);
  assert.deepEqual(names(filterSlash(items, 'REV')), ['revert', 'web:review']);
  assert.deepEqual(names(filterSlash(items, 'notes')), ['release-notes']);
  assert.deepEqual(names(filterSlash(items, 'sum')), ['git:summary', 'resume']);
  assert.deepEqual(filterSlash(items, 'xyz'), []);
});

test('keys: arrows move (wrapping), Enter runs, Tab completes, Esc closes; Shift+Enter and IME input stay the input\'s', () => {
  assert.equal(menuKey({ key: 'ArrowDown' }), 'down');
  assert.equal(menuKey({ key: 'ArrowUp' }), 'up');
  assert.equal(menuKey({ key: 'Enter' }), 'run');
  assert.equal(menuKey({ key: 'Tab' }), 'complete');
  assert.equal(menuKey({ key: 'Escape' }), 'close');
  assert.equal(menuKey({ key: 'Enter', shiftKey: true }), null);
  assert.equal(menuKey({ key: 'Enter', isComposing: true }), null);
  assert.equal(menuKey({ key: 'a' }), null);
  assert.equal(moveSelection(0, 3, 'down'), 1);
  assert.equal(moveSelection(2, 3, 'down'), 0);
  assert.equal(moveSelection(0, 3, 'up'), 2);
  assert.equal(moveSelection(0, 0, 'up'), 0);
});

test('a typed line: the name and the rest; anything else is a message', () => {
  assert.deepEqual(parseSlashLine('/compact'), { name: 'compact', rest: '' });
  assert.deepEqual(parseSlashLine('  /web:review  path=a.py focus="error handling"\n'), { name: 'web:review', rest: 'path=a.py focus="error handling"' });
  assert.equal(parseSlashLine('/ compact'), null);
  assert.equal(parseSlashLine('fix /etc/hosts'), null);
});

test("a prompt's arguments: name=value pairs, quoted values, or the text as the first argument", () => {
  const args = review.arguments;
  assert.equal(argumentHint({ ...items[8] }), '‹path› [focus]');
  assert.deepEqual(promptArguments(args, ''), { values: {}, missing: ['path'] });
  assert.deepEqual(promptArguments(args, 'src/a.py'), { values: { path: 'src/a.py' }, missing: [] });
  assert.deepEqual(promptArguments(args, 'my file.py'), { values: { path: 'my file.py' }, missing: [] });
  assert.deepEqual(promptArguments(args, 'path=a.py focus="error \\"handling\\""'), { values: { path: 'a.py', focus: 'error "handling"' }, missing: [] });
  assert.deepEqual(promptArguments(args, "focus='names'"), { values: { focus: 'names' }, missing: ['path'] });
  assert.deepEqual(promptArguments(args, 'path='), { values: {}, missing: ['path'] });
  assert.equal(promptArguments(args, 'path=a.py colour=red').error, 'unknown argument "colour": it takes path, focus');
  assert.equal(promptArguments(args, 'path="a.py').error, 'cannot read ""a.py": write name=value (quote a value with spaces)');
  assert.equal(promptArguments([], 'anything').error, 'this prompt takes no arguments');
  assert.deepEqual(promptArguments([], ''), { values: {}, missing: [] });
});
