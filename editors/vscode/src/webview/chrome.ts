// The panel's chrome: the header (title, model, context meter, plan mode),
// the status line, the read-only and demo banners, and the input's buttons
// and placeholder, all drawn from the session's state.

import { contextMeter, formatTokens } from '../transcript';
import { $ } from './dom';
import { view } from './view';

const input = $<HTMLTextAreaElement>('input');
const sendButton = $<HTMLButtonElement>('send');
const cancelButton = $<HTMLButtonElement>('cancel');
const modeEl = $('mode');
const statusEl = $('status');
const readOnlyEl = $('readonly');
const readOnlyText = $('readonly-text');
const titleEl = $('session-title');
const meterEl = $('meter');
const meterFill = $('meter-fill');
const meterText = $('meter-text');
const workingEl = $('working');
const emptyEl = $('empty');
const planMode = $<HTMLInputElement>('plan-mode');
const modelButton = $<HTMLButtonElement>('model');
const demoBanner = $('demo-banner');

/** The header, the status and the input's controls for what the session is doing now. */
export function renderChrome(): void {
  const { state, readOnly, permission, whileRunning, serverModel } = view;
  // a read-only session's "running" is the other window's turn: nothing to stop here
  const running = state.status === 'running' && !readOnly;
  const waiting = !!permission && !readOnly;
  // Idle only with a server to answer: before it runs, "starting"; after it stopped, "no server".
  const idle = view.server === 'running' ? 'idle' : view.server === 'starting' ? 'starting' : 'no server';
  statusEl.textContent = readOnly ? 'read-only' : waiting ? 'waiting for you' : running ? 'running' : idle;
  statusEl.className = readOnly ? 'read-only' : waiting ? 'waiting' : running ? 'running' : idle.replace(' ', '-');
  readOnlyEl.hidden = !readOnly;
  readOnlyText.textContent = readOnly ?? '';
  input.placeholder = readOnly ? 'Read-only here: start a new session to continue (Enter).' : 'Ask the agent… (Enter to send, Shift+Enter for a new line, / for commands)';
  cancelButton.hidden = !running;
  modeEl.hidden = !running;
  for (const radio of modeEl.querySelectorAll<HTMLInputElement>('input')) {
    radio.checked = radio.value === whileRunning;
  }
  sendButton.textContent = readOnly ? 'New session' : running ? (whileRunning === 'steer' ? 'Steer' : 'Queue') : 'Send';
  const meter = contextMeter(state);
  meterEl.hidden = !meter;
  if (meter) {
    meterFill.style.width = `${meter.percent ?? 0}%`;
    meterFill.className = meter.percent != null && meter.percent >= 80 ? 'high' : '';
    const fixed = meter.fixed != null ? ` · fixed ${formatTokens(meter.fixed)}` : '';
    meterText.textContent = (meter.window ? `${meter.percent}% of ${formatTokens(meter.window)}` : `${formatTokens(meter.used)} tokens`) + fixed;
    meterEl.title =
      `Context: ${meter.used.toLocaleString()}${meter.window ? ` of ${meter.window.toLocaleString()}` : ''} tokens used by the last model call` +
      `${state.model ? ` (${state.model})` : ''}` +
      `${meter.fixed != null ? `, ${meter.fixed.toLocaleString()} of them the system prompt and tools every request carries` : ''}.` +
      `${meter.percent != null && meter.percent >= 80 ? ' The next request may not fit: older history is compacted first.' : ''}` +
      ' Agent: Compact the Conversation frees it.';
  }
  const first = state.items.find((i) => i.kind === 'user');
  titleEl.textContent = first && first.kind === 'user' ? first.text.split('\n')[0] : 'New session';
  titleEl.title = state.model ? `${titleEl.textContent} · ${state.model}` : titleEl.textContent ?? '';
  // The model in use: the one this session switched to, else as the server chooses it for the next
  // turn, else as the last model call reported it. The header's model is also the picker's button.
  const switched = state.modelSwitched ? state.model : null;
  const model = switched?.split(' / ').pop() ?? serverModel?.label ?? state.model?.split(' / ').pop();
  modelButton.textContent = model ?? 'model';
  modelButton.title = `Model: ${switched ?? serverModel?.detail ?? state.model ?? 'not known yet'}. Click to switch the model (and reasoning effort) of this session.`;
  demoBanner.hidden = !serverModel?.demo;
  workingEl.hidden = !running;
  emptyEl.hidden = state.items.length > 0;
  planMode.checked = state.mode === 'plan';
  planMode.disabled = !!readOnly || !state.sessionId;
  modelButton.disabled = !!readOnly;
}
