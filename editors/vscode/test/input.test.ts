import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseSendAction, keyAction, methodFor, parseMentions } from '../src/input';
import { lineLabel, sessionTitle } from '../src/protocol';

test('idle: Enter starts a turn whatever the preference', () => {
  assert.equal(chooseSendAction('idle', 'steer', false), 'followup');
  assert.equal(chooseSendAction('idle', 'queue', true), 'followup');
  assert.equal(methodFor('followup'), 'agent/followup');
});

test('running: Enter does the preferred thing, Alt+Enter the other', () => {
  assert.equal(chooseSendAction('running', 'queue', false), 'queue');
  assert.equal(chooseSendAction('running', 'queue', true), 'steer');
  assert.equal(chooseSendAction('running', 'steer', false), 'steer');
  assert.equal(chooseSendAction('running', 'steer', true), 'queue');
  assert.equal(methodFor('queue'), 'agent/followup');
  assert.equal(methodFor('steer'), 'agent/steer');
});

test('keys: Enter sends, Shift+Enter is a new line, Escape cancels, IME composition is left alone', () => {
  assert.equal(keyAction({ key: 'Enter' }), 'send');
  assert.equal(keyAction({ key: 'Enter', shiftKey: true }), null);
  assert.equal(keyAction({ key: 'Enter', altKey: true }), 'send-alternate');
  assert.equal(keyAction({ key: 'Escape' }), 'cancel');
  assert.equal(keyAction({ key: 'Enter', isComposing: true }), null);
  assert.equal(keyAction({ key: 'a' }), null);
});

test('@file mentions are found, e-mail addresses are not', () => {
  assert.deepEqual(parseMentions('look at @src/app.py and @README.md, not bob@example.com; @src/app.py again'), [
    'src/app.py',
    'README.md',
  ]);
  assert.deepEqual(parseMentions('@a.py.'), ['a.py']);
  assert.deepEqual(parseMentions('no mentions @ here'), []);
});

test('a selection is labelled by the lines it covers', () => {
  const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
  assert.equal(lineLabel(r(0, 0, 0, 5)), '1');
  assert.equal(lineLabel(r(0, 0, 1, 0)), '1', 'select-all of a one-line file ends at the start of line 2');
  assert.equal(lineLabel(r(2, 4, 6, 1)), '3-7');
});

test("a session's title in the list is what the user typed", () => {
  assert.equal(sessionTitle('hi there, see @hello.py<context>\n{"kind": "file", "uri": "file:///ws/hello.py"}\n</context>'), 'hi there, see @hello.py');
  assert.equal(sessionTitle('fix it <context>\n{"kind": "file", "uri": "file:///ws/a-very-long-path…'), 'fix it');
  assert.equal(sessionTitle(undefined), '');
});
