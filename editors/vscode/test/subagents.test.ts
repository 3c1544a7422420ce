import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEvents, applySubagentStatus, createTranscript, loadTranscript, ToolItem } from '../src/transcript';
import { subagentLabel } from '../src/subagents';
import { planProgress } from '../src/plan';
import { Log } from './events';

function subagentTurn(log: Log): void {
  log.add('turn/start', { turn: 1 });
  log.add('tool/call', { turn: 1, step: 1, callId: 'sa', name: 'subagent', arguments: '{"description":"count lines","task":"count"}' });
  log.add('subagent/start', { turn: 1, step: 1, callId: 'sa', childSessionId: 'child1', description: 'count lines' });
}

test('a sub-agent card follows its child from start to its report, live and on reload alike', () => {
  const log = new Log();
  subagentTurn(log);
  const state = createTranscript('parent');
  applyEvents(state, log.events);
  assert.deepEqual(state.subagents.get('sa'), { callId: 'sa', childSessionId: 'child1', description: 'count lines', status: 'running' });
  const card = state.items.find((i) => i.kind === 'tool') as ToolItem;
  const before = card.rev;
  applySubagentStatus(state, { sessionId: 'parent', callId: 'sa', childSessionId: 'child1', description: 'count lines', status: 'completed', usage: { inputTokens: 34, outputTokens: 9 } });
  assert.ok(card.rev > before, 'the card is redrawn');
  assert.equal(subagentLabel(state.subagents.get('sa')!), 'completed · 34 in / 9 out');
  log.add('tool/result', {
    turn: 1, step: 1, callId: 'sa', name: 'subagent',
    message: { role: 'tool', callId: 'sa', name: 'subagent', content: [{ type: 'text', text: '3 lines' }] },
    meta: { subagent: { sessionId: 'child1', status: 'completed', description: 'count lines', usage: { inputTokens: 34, outputTokens: 9 } } },
  });
  applyEvents(state, log.events);
  const reloaded = loadTranscript('parent', log.events, 'idle');
  for (const s of [state, reloaded]) {
    assert.deepEqual(s.subagents.get('sa'), {
      callId: 'sa', childSessionId: 'child1', description: 'count lines', status: 'completed', usage: { inputTokens: 34, outputTokens: 9 },
    });
    assert.equal((s.items.find((i) => i.kind === 'tool') as ToolItem).output, '3 lines');
  }
});

test('the plan is a checklist item per update and the mode follows session/mode', () => {
  const log = new Log();
  log.add('session/mode', { mode: 'plan', previous: 'default' });
  log.add('turn/start', { turn: 1 });
  log.add('plan/update', { turn: 1, step: 1, callId: 't', items: [{ content: 'read', status: 'completed' }, { content: 'fix', status: 'in_progress' }] });
  const state = loadTranscript('s', log.events, 'idle');
  assert.equal(state.mode, 'plan');
  const plan = state.items.find((i) => i.kind === 'plan');
  assert.ok(plan && plan.kind === 'plan');
  assert.deepEqual(plan.entries, [{ content: 'read', status: 'completed' }, { content: 'fix', status: 'in_progress' }]);
  assert.equal(planProgress(plan.entries), '1 of 2 done');
  const notice = state.items.find((i) => i.kind === 'notice');
  assert.ok(notice && notice.kind === 'notice' && notice.text.startsWith('Plan mode on'));
  log.add('session/mode', { mode: 'default', previous: 'plan', carriedPlan: true });
  applyEvents(state, log.events);
  assert.equal(state.mode, 'default');
  const last = state.items[state.items.length - 1];
  assert.ok(last.kind === 'notice' && last.text === 'Plan mode off: the plan goes to the agent with your next message.');
});
