// The input box's decisions, kept pure so they are tested without a DOM.

import { AgentStatus } from './protocol';

export type WhileRunning = 'queue' | 'steer';

/** followup = start a turn now; queue = agent/followup while running (runs as
 * the next turn); steer = agent/steer (enters the running turn at its next step). */
export type SendAction = 'followup' | 'queue' | 'steer';

export function chooseSendAction(status: AgentStatus, preferred: WhileRunning, alternate: boolean): SendAction {
  if (status !== 'running') {
    return 'followup';
  }
  const other: WhileRunning = preferred === 'queue' ? 'steer' : 'queue';
  return alternate ? other : preferred;
}

export function methodFor(action: SendAction): 'agent/followup' | 'agent/steer' {
  return action === 'steer' ? 'agent/steer' : 'agent/followup';
}

export type KeyAction = 'send' | 'send-alternate' | 'cancel' | null;

export interface KeyInput {
  key: string;
  shiftKey?: boolean;
  altKey?: boolean;
  ctrlKey?: boolean;
  metaKey?: boolean;
  isComposing?: boolean;
}

/** Enter sends, Shift+Enter is a new line, Alt+Enter sends the other way
 * (steer instead of queue or back), Escape cancels the running turn. */
export function keyAction(e: KeyInput): KeyAction {
  if (e.isComposing) {
    return null;
  }
  if (e.key === 'Escape') {
    return 'cancel';
  }
  if (e.key !== 'Enter' || e.shiftKey) {
    return null;
  }
  return e.altKey ? 'send-alternate' : 'send';
}

const MENTION = /(^|\s)@((?:[\w.~-]+\/)*[\w.~-]*[\w~-])/g;

/** `@path/to/file` mentions in a message, in order, without duplicates. */
export function parseMentions(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const path = match[2];
    if (!found.includes(path)) {
      found.push(path);
    }
  }
  return found;
}
