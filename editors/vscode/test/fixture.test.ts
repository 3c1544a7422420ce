// The recorded session (tests/fixtures/session.json, a real run through the
// real server): replayed as it was streamed (merged chunks and all) and as
// agent/session/load returns it, the transcript shows the same thing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventView, SessionLoadResult } from '../src/protocol';
import { Item, TextItem, ToolItem, applyEvents, applyToolProgress, createTranscript, lastAssistantText, loadTranscript } from '../src/transcript';

// out/test/fixture.test.js -> <repo>/tests/fixtures/session.json
const recording = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'tests', 'fixtures', 'session.json'), 'utf8'));
const sid: string = recording.sessionId;
const load: SessionLoadResult = recording.load;

function view(items: Item[]): unknown[] {
  return items.map((item) => {
    const { rev: _rev, ...rest } = item as any;
    return rest;
  });
}

function live() {
  const state = createTranscript(sid);
  for (const [method, params] of recording.notifications as [string, any][]) {
    if (method === 'session/event') {
      assert.equal(applyEvents(state, params.events as EventView[]).gap, false);
    } else if (method === 'agent/tool/progress') {
      applyToolProgress(state, params.callId, params.data);
    }
  }
  return state;
}

test('the recorded stream, merged chunks included, draws what the load answer draws', () => {
  const streamed = live();
  const loaded = loadTranscript(sid, load.events, load.status, load.inbox);
  assert.ok(recording.notifications.some(([m, p]: [string, any]) => m === 'session/event' && p.events.some((e: any) => 'lastSeq' in e)));
  assert.deepEqual(view(streamed.items), view(loaded.items));
  assert.equal(streamed.lastSeq, load.events[load.events.length - 1].seq);
});

test('the recorded session shows its turns, tools, retry, cancel, compaction and revert', () => {
  const state = loadTranscript(sid, load.events, load.status, load.inbox);
  const of = (kind: Item['kind']): any[] => state.items.filter((i) => i.kind === kind);
  assert.deepEqual(of('user').map((u: { text: string }) => u.text), ['Fix add() in calc.py', 'Anything else?', 'Now refactor it']);
  assert.deepEqual(of('reasoning').map((r: TextItem) => r.text), ['Two files to read first.']);
  const tools = of('tool') as ToolItem[];
  assert.deepEqual(tools.map((t) => [t.name, t.status]), [
    ['read_file', 'done'],
    ['read_file', 'done'],
    ['edit_file', 'done'],
    ['run_command', 'failed'],
  ]);
  assert.equal(tools[3].error?.code, 'PERMISSION_DENIED');
  assert.deepEqual(of('turn-end').map((t: { reason: string }) => t.reason), ['completed', 'completed', 'aborted']);
  const texts = of('text').map((t: TextItem) => t.text);
  assert.ok(texts.includes('Answer after the retry.'), texts.join('|'));
  assert.ok(of('text').some((t: TextItem) => t.text === 'Working on it' && t.interrupted));
  const [compaction] = of('compaction');
  assert.equal(compaction.status, 'done');
  assert.equal(compaction.summary, 'Summary: add() fixed.');
  assert.deepEqual(state.reverts.get(1)?.reverted, ['/home/user/project/calc.py']);
  assert.equal(lastAssistantText(state), 'Working on it');
  assert.deepEqual(state.inbox, { nextTurn: [], nextStep: [] });
});
