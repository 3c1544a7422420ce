// The transcript: each item of the shared reducer's state drawn once per
// change (only the items whose rev changed, once per animation frame: 200
// chunks/s cost a handful of DOM updates per frame, not a rebuild), the
// turn's footer with its usage and revert, and the "New activity" button.

import { lineLabel } from '../protocol';
import type { RevertOutcome } from '../protocol';
import { Item, Transcript, formatTokens, lastAssistantText } from '../transcript';
import { costLabel, usageTooltip } from '../usage';
import { renderAnswerText } from './answerText';
import { renderHook, renderPlan, renderTool } from './cards';
import { renderImages } from './imageThumbs';
import { renderChrome } from './chrome';
import { $, button, el, post } from './dom';
import { cardLabels } from './permissionCard';
import { queueChanged, renderQueueIfChanged } from './queue';
import { view } from './view';

export const transcriptEl = $('transcript');
const emptyEl = $('empty');
const newActivity = $<HTMLButtonElement>('new-activity');
const permissionEl = $('permission');
let renderedRev = 0;
const nodes = new Map<string, HTMLElement>();
let frame: number | null = null;

function renderItem(node: HTMLElement, item: Item): void {
  switch (item.kind) {
    case 'user': {
      if (item.note) {
        // Text meant for the model (a review undo, a skill run): the user sees a short note, not it.
        node.className = 'item notice user-note';
        node.replaceChildren(el('div', 'user-note-text', item.note.text));
        break;
      }
      node.className = item.steer ? 'item user steer' : 'item user';
      node.replaceChildren(el('div', 'user-text', item.text));
      renderImages(node, item.images);
      if (item.steer) {
        node.prepend(el('div', 'user-tag', 'steering'));
      }
      if (item.rewound) {
        node.prepend(el('div', 'user-tag rewound-note', "↶ rewound: no longer in the model's context"));
      } else if (!item.steer && item.turn != null && !view.readOnly) {
        node.append(turnActions(item.turn));
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
      renderAnswerText(node, item);
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
        const logged = view.state.reverts.get(turn);
        const outcome = logged ? relativeOutcome(logged) : view.reverts[turn];
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
  for (const root of view.roots) {
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

function nearBottom(): boolean {
  return transcriptEl.scrollHeight - transcriptEl.scrollTop - transcriptEl.clientHeight < 60;
}

/** Whether the view follows new output: true until the user scrolls up, and
 * again once they scroll back down. Only the user's scrolling changes it; a
 * layout change (the permission card, a banner, the queue taking room from
 * the transcript) does not, so the view stays at the bottom across it. */
let pinned = true;
/** Where the panel last scrolled itself to: only a scroll above it is the user's. */
let ownTop = 0;

function toBottom(): void {
  transcriptEl.scrollTop = transcriptEl.scrollHeight;
  ownTop = transcriptEl.scrollTop;
}

/** Keep the view at the bottom if it follows the output. */
export function followBottom(): void {
  if (pinned) {
    toBottom();
  }
}

function render(): void {
  frame = null;
  const changed = view.state.rev > renderedRev;
  for (const item of view.state.items) {
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
    node.classList.toggle('rewound', !!item.rewound);
  }
  renderedRev = view.state.rev;
  renderQueueIfChanged();
  renderChrome();
  if (pinned) {
    toBottom();
  } else if (changed && view.state.items.length) {
    newActivity.hidden = false; // scrolled up to read: say that more came, do not jump
  }
  if (view.state.openText !== null) {
    return; // the report carries the whole answer: once it is complete, not per frame
  }
  const lastError = [...transcriptEl.querySelectorAll('.item.error')].pop();
  const actions = [...cardLabels(permissionEl), ...[...(lastError?.querySelectorAll('button') ?? [])].map((b) => b.textContent ?? '')];
  const status = view.readOnly ? 'read-only' : view.permission ? 'waiting' : view.state.status;
  post({ type: 'rendered', items: nodes.size, lastText: lastAssistantText(view.state), status, actions });
}

/** Redraw what changed, once, at the next animation frame. */
export function scheduleRender(): void {
  frame ??= requestAnimationFrame(render);
}

/** Show another transcript (a session loaded, or the same one read again). */
export function reset(next: Transcript): void {
  view.state = next;
  newActivity.hidden = true;
  pinned = true;
  nodes.clear();
  transcriptEl.replaceChildren(emptyEl);
  renderedRev = 0;
  queueChanged();
  scheduleRender();
}

// A scroll the panel did not make itself is the user's: it decides whether
// the view follows. Scroll events arrive a frame late, so the panel's own
// scroll to the bottom may be read after more output came (no longer "near
// the bottom"): only a scroll above where the panel put the view stops following.
transcriptEl.addEventListener('scroll', () => {
  if (nearBottom()) {
    pinned = true;
    newActivity.hidden = true;
  } else if (transcriptEl.scrollTop < ownTop - 2) {
    pinned = false;
  }
});
// The transcript's own size changes (the card, the queue, a banner above or
// below it): stay at the bottom if it was there.
new ResizeObserver(followBottom).observe(transcriptEl);
newActivity.addEventListener('click', () => {
  pinned = true;
  toBottom();
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
