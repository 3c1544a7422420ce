// The panel's script (runs in the webview). It folds events with the shared
// reducer and redraws only the items whose rev changed, once per animation
// frame: 200 chunks/s cost a handful of DOM updates per frame, not a rebuild.

import { AgentStatus, Message, RevertOutcome, SessionEvent, lineLabel, userText } from '../protocol';
import { chooseSendAction, keyAction, WhileRunning } from '../input';
import { SlashItem, argumentHint, filterSlash, menuKey, moveSelection, parseSlashLine, slashItems, slashQuery } from '../slashMenu';
import { renderMarkdown } from '../markdown';
import { planProgress } from '../plan';
import { hookLine } from '../hooks';
import { mcpToolTitle } from '../mcp';
import { SUBAGENT_TOOL, subagentLabel } from '../subagents';
import { costLabel, usageTooltip } from '../usage';
import type { PermissionCard } from '../permissionCard';
import { cardLabels, renderPermissionCard } from './permissionCard';
import {
  HookItem,
  Item,
  PlanItem,
  ToolItem,
  Transcript,
  applyEvents,
  applySubagentStatus,
  applyToolProgress,
  contextMeter,
  createTranscript,
  formatTokens,
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
const readOnlyEl = $('readonly');
const readOnlyText = $('readonly-text');
const attach = $<HTMLInputElement>('attach');
const contextLabel = $('context-label');
const titleEl = $('session-title');
const meterEl = $('meter');
const meterFill = $('meter-fill');
const meterText = $('meter-text');
const workingEl = $('working');
const emptyEl = $('empty');
const planMode = $<HTMLInputElement>('plan-mode');
const newActivity = $<HTMLButtonElement>('new-activity');
const modelButton = $<HTMLButtonElement>('model');
const demoBanner = $('demo-banner');
/** The model the server says the next turn uses (agent/model/info), before any turn shows one. */
let serverModel: { label: string; demo: boolean; detail: string } | null = null;
const permissionEl = $('permission');
/** The permission question waiting for the user, if any. */
let permission: PermissionCard | null = null;

const slashMenu = $('slash-menu');
/** What the "/" menu offers: the panel's commands until the extension lists skills and prompts. */
let slashList: SlashItem[] = slashItems([], []);
let slashLoading = false;
/** The open menu: the items that fit what is typed, and the highlighted one. */
let menu: { items: SlashItem[]; index: number } | null = null;
/** The input's text when Esc closed the menu: it stays closed until the text changes. */
let menuDismissedFor: string | null = null;

let state: Transcript = createTranscript();
/** Outcomes of "Revert this turn" by turn (what the server answered). */
let reverts: Record<number, RevertOutcome> = {};
/** Workspace folders, to show the logged reverts' absolute paths relative. */
let roots: string[] = [];
let whileRunning: WhileRunning = 'queue';
/** Set while the session is open in another window: why it is read-only here. */
let readOnly: string | null = null;
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
    if (className === 'icon') {
      b.setAttribute('aria-label', title); // an icon alone ("×", "✎") says nothing to a screen reader
    }
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

/** A sub-agent's card: its description and live status, its report when it
 * ended, Stop while it runs, and a link to its own transcript. */
function renderSubagent(node: HTMLElement, item: ToolItem): void {
  const view = state.subagents.get(item.callId);
  const args = parseArgs(item.args) ?? {};
  const status = view?.status ?? (item.status === 'failed' ? 'failed' : item.status === 'done' ? 'completed' : 'running');
  node.className = `item tool subagent ${status}`;
  const open = node.querySelector('details')?.open ?? false;
  const details = el('details') as HTMLDetailsElement;
  details.open = open;
  const summary = el('summary');
  summary.append(
    el('span', 'tool-icon', STATUS_ICON[status === 'completed' ? 'done' : status === 'running' ? 'running' : 'failed']),
    el('span', 'tool-name', `Sub-agent${view?.agentType ? ` (${view.agentType})` : ''}`),
    el('span', 'tool-arg', view?.description || String(args.description ?? '')),
    el('span', 'subagent-status', view ? subagentLabel(view) : status),
  );
  details.append(summary);
  if (args.task) {
    details.append(el('div', 'subagent-task', String(args.task)));
  }
  if (item.output) {
    const report = el('div', 'subagent-report markdown');
    report.innerHTML = renderMarkdown(item.output);
    details.append(report);
  }
  node.replaceChildren(details);
  const child = view?.childSessionId;
  if (child) {
    const actions = el('div', 'subagent-actions');
    if (status === 'running') {
      actions.append(button('Stop', 'link', () => post({ type: 'cancelSubagent', sessionId: child }), 'Cancel this sub-agent alone'));
    }
    actions.append(button('Open transcript', 'link', () => post({ type: 'openSubagent', sessionId: child }), 'Show the sub-agent\'s own session'));
    node.append(actions);
  }
}

/** A user hook that ran: one collapsed line; where it is configured, its exit code and message inside. */
function renderHook(node: HTMLElement, item: HookItem): void {
  node.className = `item hook ${item.outcome}`;
  const wasOpen = node.querySelector('details')?.open ?? false;
  const details = el('details') as HTMLDetailsElement;
  details.open = wasOpen;
  details.append(el('summary', 'hook-line', hookLine(item)));
  const about = `${item.source} hook from ${item.origin}${item.exitCode != null ? ` · exit code ${item.exitCode}` : ''}`;
  details.append(el('div', 'hook-about', about));
  if (item.message) {
    details.append(el('pre', 'hook-message', item.message));
  }
  node.replaceChildren(details);
}

/** The plan as a checklist. */
function renderPlan(node: HTMLElement, item: PlanItem): void {
  node.className = 'item plan';
  const list = el('ul', 'plan-list');
  for (const entry of item.entries) {
    const row = el('li', `plan-entry ${entry.status}`);
    const box = el('input') as HTMLInputElement;
    box.type = 'checkbox';
    box.disabled = true;
    box.checked = entry.status === 'completed';
    row.append(box, el('span', 'plan-text', entry.content));
    if (entry.status === 'in_progress') {
      row.append(el('span', 'plan-now', 'in progress'));
    }
    list.append(row);
  }
  node.replaceChildren(el('div', 'plan-title', `Plan · ${planProgress(item.entries)}`), list);
}

function renderTool(node: HTMLElement, item: ToolItem): void {
  if (item.name === SUBAGENT_TOOL) {
    renderSubagent(node, item);
    return;
  }
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
  summary.append(el('span', 'tool-icon', STATUS_ICON[item.status] ?? '?'), el('span', 'tool-name', item.name ? mcpToolTitle(item.name) : 'tool'), el('span', 'tool-arg', toolSummary(item)));
  details.append(summary);
  const args = parseArgs(item.args);
  // The arguments, unless the summary line already says all of them.
  if (item.args && !(args && Object.keys(args).length === 1 && String(Object.values(args)[0]) === toolSummary(item))) {
    details.append(el('pre', 'tool-args', args ? JSON.stringify(args, null, 2) : item.args));
  }
  const out = item.output || item.progress;
  if (out) {
    details.append(el('pre', 'tool-output', out.length > 20000 ? `…${out.slice(out.length - 20000)}` : out));
  }
  node.append(details);
  if (item.status === 'failed') {
    // Why it failed, visible without opening the card.
    const exitCode = item.meta?.exitCode;
    const exited = typeof exitCode === 'number' && exitCode !== 0 ? `exited with ${exitCode}` : '';
    const why = item.error?.message || [exited, item.output.trim().split('\n')[0]].filter(Boolean).join(': ');
    node.append(el('div', 'tool-error', why.length > 300 ? `${why.slice(0, 300)}…` : why));
  }
  if (hasDiff(item)) {
    node.append(button('Show diff', 'link', () => post({ type: 'showDiff', key: item.key }), 'Open the change in the diff editor'));
  }
}

function renderItem(node: HTMLElement, item: Item): void {
  switch (item.kind) {
    case 'user': {
      node.className = item.steer ? 'item user steer' : 'item user';
      node.replaceChildren(el('div', 'user-text', item.text));
      if (item.steer) {
        node.prepend(el('div', 'user-tag', 'steering'));
      } else if (item.turn != null && !readOnly) {
        node.prepend(turnActions(item.turn));
      }
      if (item.context.length) {
        const chips = el('div', 'chips');
        for (const c of item.context) {
          const name = decodeURIComponent(c.uri.split('/').pop() ?? c.uri);
          const lines = c.range ? `:${lineLabel(c.range)}` : '';
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
    case 'plan':
      renderPlan(node, item);
      break;
    case 'hook':
      renderHook(node, item);
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
      const tokens = item.usage ? (item.usage.inputTokens ?? 0) + (item.usage.outputTokens ?? 0) : 0;
      const usage = tokens ? ` · ${formatTokens(tokens)} tokens${costLabel(item.usage)}` : '';
      const line = el('span', 'turn-line', `${labels[item.reason] ?? item.reason}${item.turn != null ? ` · turn ${item.turn}` : ''}${usage}`);
      if (tokens) {
        line.title = usageTooltip(item.usage, item.sessionUsage);
      }
      node.replaceChildren(line);
      if (item.hasEdits && item.turn != null) {
        const turn = item.turn;
        // The logged revert (from any client, kept across restarts) is what
        // happened; this window's own answer covers a failed request.
        const logged = state.reverts.get(turn);
        const outcome = logged ? relativeOutcome(logged) : reverts[turn];
        if (outcome) {
          node.append(revertNote(outcome));
        }
        if (outcome?.error) {
          node.append(button('Try again', 'link revert', () => post({ type: 'revertTurn', turn }), 'Ask the server to revert this turn again'));
        } else if (!outcome) {
          node.append(button('Revert this turn', 'link revert', () => post({ type: 'revertTurn', turn }), 'Undo the edits the agent made in this turn'));
        }
      }
      break;
    }
    case 'compaction': {
      node.className = `item compaction ${item.status}`;
      const label =
        item.status === 'running'
          ? 'Compacting the conversation…'
          : item.status === 'failed'
            ? `Compaction failed: ${item.error}`
            : `Conversation compacted${item.tokens ? `: ${formatTokens(item.tokens)} tokens of older messages` : ''} summarised for the model`;
      if (item.summary) {
        const details = (node.querySelector('details') as HTMLDetailsElement | null) ?? (el('details') as HTMLDetailsElement);
        const open = details.open;
        details.replaceChildren(el('summary', '', label), el('div', 'compaction-summary', item.summary));
        details.open = open;
        node.replaceChildren(details);
      } else {
        node.replaceChildren(el('span', '', label));
      }
      break;
    }
    case 'error': {
      node.className = 'item error';
      node.replaceChildren(el('strong', '', item.code), document.createTextNode(` ${item.message}`));
      const actions = el('div', 'error-actions');
      actions.append(button('Retry', 'link retry', () => post({ type: 'retryTurn', turn: item.turn }), 'Send the message of this turn again'));
      if (item.code === 'AUTH') {
        actions.append(button('Set API Key…', 'link', () => post({ type: 'command', command: 'agentLsp.setApiKey' }), 'Store the API key in VS Code'));
      } else if (item.code === 'NETWORK' || item.code === 'TIMEOUT' || item.code === 'MODEL_UNAVAILABLE') {
        actions.append(button('Check Model Connection', 'link', () => post({ type: 'command', command: 'agentLsp.checkModel' }), 'Send one tiny request to the configured model'));
      }
      node.append(actions);
      break;
    }
    case 'notice':
      node.className = 'item notice';
      node.textContent = item.text;
      break;
  }
}

function relativePath(path: string): string {
  for (const root of roots) {
    const prefix = root.endsWith('/') || root.endsWith('\\') ? root : `${root}/`;
    if (path.startsWith(prefix)) {
      return path.slice(prefix.length);
    }
  }
  return path;
}

function relativeOutcome(outcome: RevertOutcome): RevertOutcome {
  return {
    reverted: outcome.reverted.map(relativePath),
    skipped: outcome.skipped.map((x) => ({ path: relativePath(x.path), reason: x.reason })),
  };
}

/** What the server answered to "Revert this turn", in place of the button. */
function revertNote(outcome: RevertOutcome): HTMLElement {
  const note = el('span', 'revert-note');
  if (outcome.error) {
    note.classList.add('failed');
    note.textContent = `↶ revert failed: ${outcome.error}`;
    return note;
  }
  const parts: string[] = [];
  if (outcome.reverted.length) {
    parts.push(`↶ reverted ${outcome.reverted.join(', ')}`);
  }
  if (outcome.skipped.length) {
    parts.push(`left alone: ${outcome.skipped.map((x) => `${x.path} (${x.reason})`).join('; ')}`);
    note.classList.add('partial');
  }
  if (!parts.length) {
    parts.push('↶ nothing left to revert in this turn');
  }
  note.textContent = parts.join(' · ');
  return note;
}

/** The hover actions on a turn's first message. */
function turnActions(turn: number): HTMLElement {
  const actions = el('div', 'turn-actions');
  actions.append(
    button('Fork from here', 'link', () => post({ type: 'forkTurn', turn }), `A new session sharing the history up to the end of turn ${turn}`),
    button('Rewind to here', 'link', () => post({ type: 'rewindTurn', turn }), `Cut the conversation back to before turn ${turn}`),
  );
  return actions;
}

function renderQueue(): void {
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

function renderChrome(): void {
  // a read-only session's "running" is the other window's turn: nothing to stop here
  const running = state.status === 'running' && !readOnly;
  const waiting = !!permission && !readOnly;
  statusEl.textContent = readOnly ? 'read-only' : waiting ? 'waiting for you' : running ? 'running' : 'idle';
  statusEl.className = readOnly ? 'read-only' : waiting ? 'waiting' : running ? 'running' : 'idle';
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
    meterText.textContent = meter.window ? `${meter.percent}% of ${formatTokens(meter.window)}` : `${formatTokens(meter.used)} tokens`;
    meterEl.title =
      `Context: ${meter.used.toLocaleString()}${meter.window ? ` of ${meter.window.toLocaleString()}` : ''} tokens used by the last model call` +
      `${state.model ? ` (${state.model})` : ''}. Agent: Compact the Conversation frees it.`;
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

function nearBottom(): boolean {
  return transcriptEl.scrollHeight - transcriptEl.scrollTop - transcriptEl.clientHeight < 60;
}

function render(): void {
  frame = null;
  const stick = nearBottom();
  const changed = state.rev > renderedRev;
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
  } else if (changed && state.items.length) {
    newActivity.hidden = false; // scrolled up to read: say that more came, do not jump
  }
  const lastError = [...transcriptEl.querySelectorAll('.item.error')].pop();
  const actions = [...cardLabels(permissionEl), ...[...(lastError?.querySelectorAll('button') ?? [])].map((b) => b.textContent ?? '')];
  const status = readOnly ? 'read-only' : permission ? 'waiting' : state.status;
  post({ type: 'rendered', items: nodes.size, lastText: lastAssistantText(state), status, actions });
}

function scheduleRender(): void {
  frame ??= requestAnimationFrame(render);
}

function reset(next: Transcript): void {
  state = next;
  newActivity.hidden = true;
  nodes.clear();
  transcriptEl.replaceChildren(emptyEl);
  renderedRev = 0;
  queueDirty = true;
  scheduleRender();
}

// ------------------------------------------------------------------ input

function send(alternate: boolean): void {
  if (readOnly) {
    post({ type: 'newSession' }); // the typed text stays, to send in the new session
    return;
  }
  const text = input.value.trim();
  if (!text) {
    return;
  }
  const line = parseSlashLine(text);
  if (line && slashList.some((item) => item.name === line.name)) {
    runSlash(line.name, line.rest, text);
    return;
  }
  // Decided here, where the user sees the Send/Queue/Steer label.
  post({ type: 'send', text, action: chooseSendAction(state.status, whileRunning, alternate) });
  input.value = '';
}

// ------------------------------------------------------------------ the "/" menu

const SLASH_KIND: Record<SlashItem['kind'], string> = { command: 'command', skill: 'skill', prompt: 'MCP prompt' };

function runSlash(name: string, rest: string, text: string): void {
  post({ type: 'slash', name, rest, text });
  input.value = '';
  closeMenu();
}

/** Open, refilter or close the menu for what the input holds now. */
function updateMenu(): void {
  const query = readOnly ? null : slashQuery(input.value, input.selectionStart ?? 0);
  if (query === null || input.value === menuDismissedFor) {
    closeMenu();
    return;
  }
  menuDismissedFor = null;
  if (!menu) {
    post({ type: 'slashItems' }); // skills and prompts change: listed again each time it opens
  }
  const items = filterSlash(slashList, query);
  const highlighted = menu?.items[menu.index]?.name;
  menu = { items, index: Math.max(0, items.findIndex((i) => i.name === highlighted)) };
  renderMenu();
}

function closeMenu(): void {
  menu = null;
  renderMenu();
}

function renderMenu(): void {
  slashMenu.hidden = !menu;
  input.removeAttribute('aria-activedescendant');
  if (!menu) {
    slashMenu.replaceChildren();
    return;
  }
  const rows = menu.items.map((item, i) => {
    const row = el('div', `slash-item${i === menu!.index ? ' selected' : ''}`);
    row.id = `slash-${i}`;
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === menu!.index));
    row.append(el('span', 'slash-name', `/${item.name}`), el('span', 'slash-args', argumentHint(item)), el('span', 'slash-kind', SLASH_KIND[item.kind]), el('span', 'slash-description', item.description));
    row.addEventListener('mousedown', (e) => {
      e.preventDefault(); // the input keeps the focus
      pickSlash(i, 'run');
    });
    return row;
  });
  if (slashLoading) {
    rows.push(el('div', 'slash-note', 'Listing skills and MCP prompts…'));
  } else if (!rows.length) {
    rows.push(el('div', 'slash-note', 'No command or prompt fits: Enter sends the text as a message.'));
  }
  slashMenu.replaceChildren(...rows);
  if (menu.items.length) {
    input.setAttribute('aria-activedescendant', `slash-${menu.index}`);
    rows[menu.index].scrollIntoView({ block: 'nearest' });
  }
}

/** Enter: run the item (a prompt asks for its arguments); Tab: write `/name ` into the input to type them. */
function pickSlash(index: number, how: 'run' | 'complete'): void {
  const item = menu?.items[index];
  if (!item) {
    return;
  }
  if (how === 'run') {
    runSlash(item.name, '', `/${item.name}`);
  } else {
    input.value = `/${item.name} `;
    input.setSelectionRange(input.value.length, input.value.length);
    closeMenu();
  }
}

/** The menu's keys, while it is open; true when the key was the menu's. */
function menuKeydown(e: KeyboardEvent): boolean {
  const key = menu ? menuKey(e) : null;
  if (!menu || !key || (key !== 'close' && !menu.items.length)) {
    return false; // an empty menu leaves Enter to send the text
  }
  e.preventDefault();
  if (key === 'close') {
    menuDismissedFor = input.value;
    closeMenu();
  } else if (key === 'up' || key === 'down') {
    menu.index = moveSelection(menu.index, menu.items.length, key);
    renderMenu();
  } else {
    pickSlash(menu.index, key === 'run' ? 'run' : 'complete');
  }
  return true;
}

input.addEventListener('input', updateMenu);
input.addEventListener('click', updateMenu);
input.addEventListener('blur', closeMenu);
input.addEventListener('keyup', (e) => {
  if (e.key === 'ArrowLeft' || e.key === 'ArrowRight' || e.key === 'Home' || e.key === 'End') {
    updateMenu(); // the caret left the slash word
  }
});

input.addEventListener('keydown', (e) => {
  if (menuKeydown(e)) {
    e.stopPropagation(); // Esc closes the menu, it does not stop the turn
    return;
  }
  const action = keyAction(e);
  if (action === 'send' || action === 'send-alternate') {
    e.preventDefault();
    send(action === 'send-alternate');
  } else if (action === 'cancel' && state.status === 'running' && !readOnly) {
    e.preventDefault();
    post({ type: 'cancel' });
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && e.target !== input && state.status === 'running' && !readOnly) {
    post({ type: 'cancel' });
  }
});
sendButton.addEventListener('click', () => send(false));
$('readonly-new').addEventListener('click', () => post({ type: 'newSession' }));
cancelButton.addEventListener('click', () => post({ type: 'cancel' }));
attach.addEventListener('change', () => post({ type: 'toggleAttach', on: attach.checked }));
planMode.addEventListener('change', () => post({ type: 'setPlanMode', on: planMode.checked }));
modelButton.addEventListener('click', () => post({ type: 'pickModel' }));
$('mention').addEventListener('click', () => post({ type: 'pickFile' }));
$('setup-model').addEventListener('click', () => post({ type: 'setupModel' }));
for (const radio of modeEl.querySelectorAll<HTMLInputElement>('input')) {
  radio.addEventListener('change', () => {
    if (radio.checked) {
      whileRunning = radio.value as WhileRunning;
      post({ type: 'setWhileRunning', mode: whileRunning });
      renderChrome();
    }
  });
}
transcriptEl.addEventListener('scroll', () => {
  if (!newActivity.hidden && nearBottom()) {
    newActivity.hidden = true;
  }
});
newActivity.addEventListener('click', () => {
  transcriptEl.scrollTop = transcriptEl.scrollHeight;
  newActivity.hidden = true;
});
transcriptEl.addEventListener('click', (e) => {
  const codeAction = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-code-action]');
  if (codeAction) {
    const code = codeAction.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    if (codeAction.dataset.codeAction === 'copy') {
      post({ type: 'copyCode', text: code });
      codeAction.textContent = 'Copied';
      setTimeout(() => (codeAction.textContent = 'Copy'), 1500);
    } else {
      post({ type: 'insertCode', text: code });
    }
    return;
  }
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
      reverts = message.reverts ?? {};
      roots = message.roots ?? [];
      readOnly = message.readOnly ?? null;
      reset(loadTranscript(message.sessionId, message.events as SessionEvent[], message.status as AgentStatus, message.inbox));
      if (!message.sessionId) {
        state.sessionId = null;
      }
      break;
    case 'events': {
      const before = state.inbox.nextTurn.length + state.inbox.nextStep.length;
      applyEvents(state, message.events);
      queueDirty ||= before !== state.inbox.nextTurn.length + state.inbox.nextStep.length || message.events.some((ev: SessionEvent) => ev.type === 'agent/inbox/spliced' || ev.type === 'agent/inbox/paused');
      scheduleRender();
      break;
    }
    case 'status':
      state.status = message.status;
      scheduleRender();
      break;
    case 'reverted':
      reverts[message.turn] = message.outcome;
      for (const item of state.items) {
        if (item.kind === 'turn-end' && item.turn === message.turn) {
          item.rev = ++state.rev; // redraw its footer
        }
      }
      scheduleRender();
      break;
    case 'progress':
      applyToolProgress(state, message.callId, message.data);
      scheduleRender();
      break;
    case 'subagent':
      applySubagentStatus(state, message.params);
      scheduleRender();
      break;
    case 'prefs':
      whileRunning = message.whileRunning;
      attach.checked = message.attach;
      scheduleRender();
      break;
    case 'context':
      contextLabel.textContent = message.label ? `Attach ${message.label}` : 'No active editor to attach';
      break;
    case 'server': {
      const stick = nearBottom();
      bannerEl.hidden = message.state === 'running';
      bannerEl.className = message.state;
      bannerEl.textContent = message.message ?? (message.state === 'starting' ? 'Starting the agent server…' : 'The agent server is not running.');
      if (message.restart && message.state !== 'running' && message.state !== 'starting') {
        const restart = document.createElement('button');
        restart.className = 'banner-action';
        restart.textContent = message.restart;
        restart.addEventListener('click', () => post({ type: 'restartServer' }));
        bannerEl.append(' ', restart);
      }
      if (stick) {
        transcriptEl.scrollTop = transcriptEl.scrollHeight;
      }
      break;
    }
    case 'model':
      serverModel = { label: message.label, demo: message.demo, detail: message.detail };
      $('demo-text').textContent = message.detail;
      scheduleRender();
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
    case 'slashItems':
      slashList = message.items;
      slashLoading = message.loading;
      if (menu) {
        updateMenu();
      }
      break;
    case 'permission':
      permission = message.card ?? null;
      renderPermissionCard(permissionEl, permission, (id, answer) => post({ type: 'answerPermission', id, answer }));
      scheduleRender();
      break;
  }
});

post({ type: 'ready' });
