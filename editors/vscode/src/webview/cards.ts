// The transcript's cards: a tool call (its arguments, output, error and diff
// button), a sub-agent, a user hook that ran, and the plan.

import { hookLine } from '../hooks';
import { renderMarkdown } from '../markdown';
import { mcpToolTitle } from '../mcp';
import { planProgress } from '../plan';
import { SUBAGENT_TOOL, subagentLabel } from '../subagents';
import type { HookItem, PlanItem, ToolItem } from '../transcript';
import { button, el, post } from './dom';
import { view } from './view';

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
  const sub = view.state.subagents.get(item.callId);
  const args = parseArgs(item.args) ?? {};
  const status = sub?.status ?? (item.status === 'failed' ? 'failed' : item.status === 'done' ? 'completed' : 'running');
  node.className = `item tool subagent ${status}`;
  const open = node.querySelector('details')?.open ?? false;
  const details = el('details') as HTMLDetailsElement;
  details.open = open;
  const summary = el('summary');
  summary.append(
    el('span', 'tool-icon', STATUS_ICON[status === 'completed' ? 'done' : status === 'running' ? 'running' : 'failed']),
    el('span', 'tool-name', `Sub-agent${sub?.agentType ? ` (${sub.agentType})` : ''}`),
    el('span', 'tool-arg', sub?.description || String(args.description ?? '')),
    el('span', 'subagent-status', sub ? subagentLabel(sub) : status),
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
  const child = sub?.childSessionId;
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
export function renderHook(node: HTMLElement, item: HookItem): void {
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
export function renderPlan(node: HTMLElement, item: PlanItem): void {
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

/** Why a tool failed, in a line: its error, or the exit code and the first line of its output. */
function failureLine(item: ToolItem): string {
  const exitCode = item.meta?.exitCode;
  const exited = typeof exitCode === 'number' && exitCode !== 0 ? `exited with ${exitCode}` : '';
  return item.error?.message || [exited, item.output.trim().split('\n')[0]].filter(Boolean).join(': ');
}

export function renderTool(node: HTMLElement, item: ToolItem): void {
  if (item.name === SUBAGENT_TOOL) {
    renderSubagent(node, item);
    return;
  }
  node.className = `item tool ${item.status}`;
  const why = item.status === 'failed' ? failureLine(item) : '';
  const out = item.output || item.progress;
  // A failure whose output is its error line alone says it once, under the card.
  const showOutput = !!out && out.trim() !== why.trim();
  let details = node.querySelector('details');
  // Open by default while a command's output streams, and when it failed with more to read.
  const wasOpen = details ? details.open || (item.status === 'running' && !!item.progress && !details.dataset.touched) : (item.status === 'failed' && showOutput) || !!item.progress;
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
  if (showOutput) {
    details.append(el('pre', 'tool-output', out.length > 20000 ? `…${out.slice(out.length - 20000)}` : out));
  }
  node.append(details);
  if (why) {
    // Why it failed, visible without opening the card.
    node.append(el('div', 'tool-error', why.length > 300 ? `${why.slice(0, 300)}…` : why));
  }
  if (hasDiff(item)) {
    node.append(button('Show diff', 'link', () => post({ type: 'showDiff', key: item.key }), 'Open the change in the diff editor'));
  }
}
