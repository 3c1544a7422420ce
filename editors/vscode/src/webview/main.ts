// The panel's script (runs in the webview). It folds events with the shared
// reducer and redraws only the items whose rev changed, once per animation
// frame: 200 chunks/s cost a handful of DOM updates per frame, not a rebuild.

import { AgentStatus, SessionEvent, UserMessage, contentText } from '../protocol';
import { chooseSendAction, keyAction, WhileRunning } from '../input';
import { renderMarkdown } from '../markdown';
import {
  Item,
  ToolItem,
  Transcript,
  applyEvents,
  applyToolProgress,
  contextMeter,
  createTranscript,
  lastAssistantText,
  loadTranscript,
} from '../transcript';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): any; setState(state: any): void };

const vscode = acquireVsCodeApi();
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const transcriptEl = $('transcript');
const queueEl = $('queue');
const input = $<HTMLTextAreaElement>('input');
const sendButton = $<HTMLButtonElement>('send');
const cancelButton = $<HTMLButtonElement>('cancel');
const modeEl = $('mode');
const statusEl = $('status');
const bannerEl = $('banner');
const attach = $<HTMLInputElement>('attach');
const contextLabel = $('context-label');
const titleEl = $('session-title');
const meterEl = $('meter');
const meterFill = $('meter-fill');
const meterText = $('meter-text');
const workingEl = $('working');
const emptyEl = $('empty');

let state: Transcript = createTranscript();
let whileRunning: WhileRunning = 'queue';
let renderedRev = 0;
const nodes = new Map<string, HTMLElement>();
let frame: number | null = null;
let queueDirty = true;

function post(message: unknown): void {
  vscode.postMessage(message);
}

// ------------------------------------------------------------------ render

function el(tag: string, className?: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function button(label: string, className: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el('button', className, label) as HTMLButtonElement;
  if (title) {
    b.title = title;
  }
  b.addEventListener('click', onClick);
  return b;
}

function parseArgs(args: string): Record<string, any> | null {
  try {
    const value = JSON.parse(args);
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}

/** One line naming what the tool does: the command or the path. */
function toolSummary(item: ToolItem): string {
  const args = parseArgs(item.args);
  if (!args) {
    return item.args.length > 80 ? `${item.args.slice(0, 80)}…` : item.args;
  }
  const main = args.command ?? args.path ?? args.pattern ?? args.newPath ?? '';
  return String(main);
}

const STATUS_ICON: Record<string, string> = { preparing: '…', running: '⟳', done: '✓', failed: '✗', dropped: '–' };

function hasDiff(item: ToolItem): boolean {
  const meta = item.meta ?? {};
  return typeof (meta.diff ?? meta.unifiedDiff ?? meta.patch) === 'string';
}

function renderTool(node: HTMLElement, item: ToolItem): void {
  node.className = `item tool ${item.status}`;
  let details = node.querySelector('details');
  // Open by default while a command's output streams, and when it failed.
  const wasOpen = details ? details.open || (item.status === 'running' && !!item.progress && !details.dataset.touched) : item.status === 'failed' || !!item.progress;
  node.replaceChildren();
  const touched = details?.dataset.touched;
  details = el('details') as HTMLDetailsElement;
  details.open = wasOpen;
  if (touched) {
    details.dataset.touched = touched;
  }
  details.addEventListener('toggle', () => {
    details!.dataset.touched = '1'; // the user's choice wins over the default
  });
  const summary = el('summary');
  summary.append(el('span', 'tool-icon', STATUS_ICON[item.status] ?? '?'), el('span', 'tool-name', item.name || 'tool'), el('span', 'tool-arg', toolSummary(item)));
  details.append(summary);
  if (item.args) {
    const args = parseArgs(item.args);
    details.append(el('pre', 'tool-args', args ? JSON.stringify(args, null, 2) : item.args));
  }
  const out = item.output || item.progress;
  if (out) {
    details.append(el('pre', 'tool-output', out.length > 20000 ? `…${out.slice(out.length - 20000)}` : out));
  }
  if (item.error?.message && item.error.message !== item.output) {
    details.append(el('div', 'tool-error', `${item.error.code ?? 'error'}: ${item.error.message}`));
  }
  node.append(details);
  if (hasDiff(item)) {
    node.append(button('Show diff', 'link', () => post({ type: 'showDiff', callId: item.callId }), 'Open the change in the diff editor'));
  }
}

function renderItem(node: HTMLElement, item: Item): void {
  switch (item.kind) {
    case 'user': {
      node.className = 'item user';
      node.replaceChildren(el('div', 'user-text', item.text));
      if (item.context.length) {
        const chips = el('div', 'chips');
        for (const c of item.context) {
          const name = decodeURIComponent(c.uri.split('/').pop() ?? c.uri);
          const lines = c.range ? `:${c.range.start.line + 1}-${c.range.end.line + 1}` : '';
          chips.append(el('span', 'chip', `${name}${lines}`));
        }
        node.append(chips);
      }
      break;
    }
    case 'text':
      node.className = `item assistant markdown${item.streaming ? ' streaming' : ''}`;
      node.innerHTML = renderMarkdown(item.text);
      break;
    case 'reasoning': {
      node.className = 'item reasoning';
      let details = node.querySelector('details');
      if (!details) {
        details = el('details') as HTMLDetailsElement;
        details.append(el('summary'), el('div', 'reasoning-text'));
        node.append(details);
      }
      details.querySelector('summary')!.textContent = item.streaming ? 'Thinking…' : 'Thought';
      details.querySelector('.reasoning-text')!.textContent = item.text;
      break;
    }
    case 'tool':
      renderTool(node, item);
      break;
    case 'turn-end': {
      const labels: Record<string, string> = {
        completed: '✓ done',
        'max-tokens': '⚠ stopped: output limit reached',
        blocked: '⊘ blocked',
        aborted: `■ ${item.detail || 'cancelled'}`,
        error: '⚠ failed',
        interrupted: '⚠ interrupted (server stopped)',
      };
      node.className = `item turn-end ${item.reason}`;
      const usage = item.usage ? ` · ${((item.usage.inputTokens ?? 0) + (item.usage.outputTokens ?? 0)).toLocaleString()} tokens` : '';
      node.replaceChildren(el('span', '', `${labels[item.reason] ?? item.reason}${item.turn != null ? ` · turn ${item.turn}` : ''}${usage}`));
      if (item.hasEdits && item.turn != null) {
        const turn = item.turn;
        node.append(button('Revert this turn', 'link', () => post({ type: 'revertTurn', turn }), 'Undo the edits the agent made in this turn'));
      }
      break;
    }
    case 'error':
      node.className = 'item error';
      node.replaceChildren(el('strong', '', item.code), document.createTextNode(` ${item.message}`));
      break;
    case 'notice':
      node.className = 'item notice';
      node.textContent = item.text;
      break;
  }
}

function renderQueue(): void {
  const { nextTurn, nextStep } = state.inbox;
  queueEl.hidden = nextTurn.length + nextStep.length === 0;
  queueEl.replaceChildren();
  const row = (m: UserMessage, label: string) => {
    const r = el('div', 'queued');
    r.append(el('span', 'queued-kind', label), el('span', 'queued-text', contentText(m.content)));
    r.append(button('×', 'icon', () => post({ type: 'removeQueued', messageId: m.id }), 'Remove before it runs'));
    queueEl.append(r);
  };
  nextStep.forEach((m) => row(m, 'steer'));
  nextTurn.forEach((m) => row(m, 'queued'));
}

function renderChrome(): void {
  const running = state.status === 'running';
  statusEl.textContent = running ? 'running' : 'idle';
  statusEl.className = running ? 'running' : 'idle';
  cancelButton.hidden = !running;
  modeEl.hidden = !running;
  for (const radio of modeEl.querySelectorAll<HTMLInputElement>('input')) {
    radio.checked = radio.value === whileRunning;
  }
  sendButton.textContent = running ? (whileRunning === 'steer' ? 'Steer' : 'Queue') : 'Send';
  const meter = contextMeter(state);
  meterEl.hidden = !meter;
  if (meter) {
    meterFill.style.width = `${meter.percent ?? 0}%`;
    meterText.textContent = meter.window
      ? `${meter.used.toLocaleString()} / ${meter.window.toLocaleString()} (${meter.percent}%)`
      : `${meter.used.toLocaleString()} tokens`;
    meterEl.title = `Context used by the last model call${state.model ? ` · ${state.model}` : ''}`;
  }
  titleEl.textContent = state.model ?? (state.sessionId ? 'Session' : 'New session');
  workingEl.hidden = !running;
  emptyEl.hidden = state.items.length > 0;
}

function nearBottom(): boolean {
  return transcriptEl.scrollHeight - transcriptEl.scrollTop - transcriptEl.clientHeight < 60;
}

function render(): void {
  frame = null;
  const stick = nearBottom();
  for (const item of state.items) {
    if (item.rev <= renderedRev && nodes.has(item.key)) {
      continue;
    }
    let node = nodes.get(item.key);
    if (!node) {
      node = el('div');
      node.dataset.key = item.key;
      nodes.set(item.key, node);
      transcriptEl.append(node);
    }
    renderItem(node, item);
  }
  renderedRev = state.rev;
  if (queueDirty) {
    renderQueue();
    queueDirty = false;
  }
  renderChrome();
  if (stick) {
    transcriptEl.scrollTop = transcriptEl.scrollHeight;
  }
  post({ type: 'rendered', items: nodes.size, lastText: lastAssistantText(state), status: state.status });
}

function scheduleRender(): void {
  frame ??= requestAnimationFrame(render);
}

function reset(next: Transcript): void {
  state = next;
  nodes.clear();
  transcriptEl.replaceChildren(emptyEl);
  renderedRev = 0;
  queueDirty = true;
  scheduleRender();
}

// ------------------------------------------------------------------ input

function send(alternate: boolean): void {
  const text = input.value.trim();
  if (!text) {
    return;
  }
  // Decided here, where the user sees the Send/Queue/Steer label.
  post({ type: 'send', text, action: chooseSendAction(state.status, whileRunning, alternate) });
  input.value = '';
}

input.addEventListener('keydown', (e) => {
  const action = keyAction(e);
  if (action === 'send' || action === 'send-alternate') {
    e.preventDefault();
    send(action === 'send-alternate');
  } else if (action === 'cancel' && state.status === 'running') {
    e.preventDefault();
    post({ type: 'cancel' });
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && e.target !== input && state.status === 'running') {
    post({ type: 'cancel' });
  }
});
sendButton.addEventListener('click', () => send(false));
cancelButton.addEventListener('click', () => post({ type: 'cancel' }));
attach.addEventListener('change', () => post({ type: 'toggleAttach', on: attach.checked }));
$('mention').addEventListener('click', () => post({ type: 'pickFile' }));
for (const radio of modeEl.querySelectorAll<HTMLInputElement>('input')) {
  radio.addEventListener('change', () => {
    if (radio.checked) {
      whileRunning = radio.value as WhileRunning;
      post({ type: 'setWhileRunning', mode: whileRunning });
      renderChrome();
    }
  });
}
transcriptEl.addEventListener('click', (e) => {
  const link = (e.target as HTMLElement).closest('a[data-href]');
  if (link) {
    e.preventDefault();
    post({ type: 'openLink', href: link.getAttribute('data-href') });
  }
});

// ------------------------------------------------------------------ messages

window.addEventListener('message', (e: MessageEvent) => {
  const message = e.data;
  switch (message?.type) {
    case 'reset':
      reset(loadTranscript(message.sessionId, message.events as SessionEvent[], message.status as AgentStatus, message.inbox));
      if (!message.sessionId) {
        state.sessionId = null;
      }
      break;
    case 'events': {
      const before = state.inbox.nextTurn.length + state.inbox.nextStep.length;
      applyEvents(state, message.events);
      queueDirty ||= before !== state.inbox.nextTurn.length + state.inbox.nextStep.length || message.events.some((ev: SessionEvent) => ev.type === 'agent/inbox/spliced');
      scheduleRender();
      break;
    }
    case 'status':
      state.status = message.status;
      scheduleRender();
      break;
    case 'progress':
      applyToolProgress(state, message.callId, message.data);
      scheduleRender();
      break;
    case 'prefs':
      whileRunning = message.whileRunning;
      attach.checked = message.attach;
      scheduleRender();
      break;
    case 'context':
      contextLabel.textContent = message.label ?? 'no active editor';
      break;
    case 'server':
      bannerEl.hidden = message.state === 'running';
      bannerEl.className = message.state;
      bannerEl.textContent = message.message ?? (message.state === 'starting' ? 'Starting the agent server…' : 'The agent server is not running.');
      break;
    case 'insert': {
      const at = input.selectionStart ?? input.value.length;
      input.value = `${input.value.slice(0, at)}${message.text}${input.value.slice(at)}`;
      input.focus();
      break;
    }
    case 'focus':
      input.focus();
      break;
  }
});

post({ type: 'ready' });
