import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FoundSession, PickItem, SearchablePick, mergeFound, searchAsYouType } from '../src/sessionSearch';

/** A stand-in for VS Code's quick pick: its value, items, busy flag and value listeners. */
class Pick implements SearchablePick<PickItem> {
  value = '';
  items: readonly PickItem[] = [];
  busy = false;
  private listeners: ((value: string) => void)[] = [];
  onDidChangeValue(listener: (value: string) => void) {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  }
  type(value: string) {
    this.value = value;
    this.listeners.forEach((l) => l(value));
  }
}

const item = (sessionId: string, label: string): PickItem => ({ sessionId, label, detail: 'updated today' });
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('sessions found by their text come first, always shown, with the text that matched', () => {
  const listed = [item('a', 'Fix the parser'), item('b', 'Rename the loader'), item('c', 'Docs')];
  const found: FoundSession[] = [{ sessionId: 'b', excerpt: 'the parser is loaded twice' }];
  const items = mergeFound(listed, found);
  assert.deepEqual(items.map((i) => i.sessionId), ['b', 'a', 'c']);
  assert.equal(items[0].alwaysShow, true);
  assert.equal(items[0].detail, 'updated today · “the parser is loaded twice”');
  assert.equal(items[1].alwaysShow, undefined); // the picker's own filter decides about the others
});

test('typing searches the server once the text settles, and clearing it shows the list again', async () => {
  const pick = new Pick();
  pick.items = [item('a', 'Fix the parser'), item('b', 'Rename the loader')];
  const queries: string[] = [];
  const search = searchAsYouType(pick, async (query) => {
    queries.push(query);
    return query === 'twice' ? [{ sessionId: 'b', excerpt: 'loaded twice' }] : [];
  }, 5);
  pick.type('t');
  pick.type('tw');
  pick.type('twice');
  await wait(30);
  assert.deepEqual(queries, ['twice']); // one request for what was typed last, none for one letter
  assert.deepEqual(pick.items.map((i) => i.sessionId), ['b', 'a']);
  assert.equal(pick.busy, false);
  search.forget('a'); // deleted from the picker meanwhile
  pick.type('');
  assert.deepEqual(pick.items.map((i) => i.sessionId), ['b']);
  search.dispose();
  pick.type('twice');
  await wait(20);
  assert.deepEqual(queries, ['twice']);
});
