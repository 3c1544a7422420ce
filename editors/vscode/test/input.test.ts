import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseSendAction, keyAction, methodFor, parseMentions } from '../src/input';

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
