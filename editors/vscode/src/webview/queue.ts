// The queue above the input: the messages waiting for the next turn (and the
// running turn's next step), each with edit, move, steer now, send now and
// remove, and the queue's pause. Redrawn only when the inbox changed.

import { Message, userText } from '../protocol';
import { $, button, el, post } from './dom';
import { view } from './view';

const queueEl = $('queue');
let dirty = true;

/** The inbox changed (or another session is shown): redraw the queue with the next frame. */
export function queueChanged(): void {
  dirty = true;
}

export function renderQueueIfChanged(): void {
  if (dirty) {
    renderQueue();
    dirty = false;
  }
}

function renderQueue(): void {
  const state = view.state;
  const { nextTurn, nextStep } = state.inbox;
  queueEl.hidden = nextTurn.length + nextStep.length === 0 && !state.queuePaused;
  queueEl.replaceChildren();
  const head = el('div', 'queue-head', state.queuePaused ? 'Queue paused: nothing queued starts' : 'Queue');
  head.append(
    state.queuePaused
      ? button('Resume', 'link', () => post({ type: 'pauseQueue', paused: false }), 'Let the queued messages run again')
      : button('Pause', 'link', () => post({ type: 'pauseQueue', paused: true }), 'Hold the queued messages (none starts a turn)'),
  );
  queueEl.append(head);
  const move = (m: Message, to: 'next-turn' | 'next-step' | 'now', index?: number) =>
    post({ type: 'moveQueued', messageId: m.id, to, ...(index != null ? { index } : {}) });
  const row = (m: Message, label: string, index: number | null) => {
    const r = el('div', 'queued');
    r.append(el('span', 'queued-kind', label), el('span', 'queued-text', userText(m)));
    const actions = el('span', 'queued-actions');
    actions.append(button('✎', 'icon', () => post({ type: 'editQueued', messageId: m.id }), 'Edit'));
    if (index != null) {
      if (index > 0) {
        actions.append(button('↑', 'icon', () => move(m, 'next-turn', index - 1), 'Move up'));
      }
      if (index < nextTurn.length - 1) {
        actions.append(button('↓', 'icon', () => move(m, 'next-turn', index + 1), 'Move down'));
      }
      actions.append(button('Steer now', 'link', () => move(m, 'next-step'), 'Send into the running turn at its next step'));
    }
    actions.append(button('Send now', 'link', () => move(m, 'now'), 'Stop the running turn and start this one'));
    actions.append(button('×', 'icon', () => post({ type: 'removeQueued', messageId: m.id }), 'Remove before it runs'));
    r.append(actions);
    queueEl.append(r);
  };
  nextStep.forEach((m) => row(m, 'steer', null));
  nextTurn.forEach((m, i) => row(m, 'queued', i));
}
