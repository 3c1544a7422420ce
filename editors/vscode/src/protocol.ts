// The agent_lsp wire protocol v1 as this client speaks it (docs/protocol.md is
// the contract). The wire types and constants are generated from the server's
// schema (protocol.generated.ts); this file adds the helpers the extension
// shares. No vscode import here: the webview and the unit tests share it.

import { withoutImagePlaceholders } from './images';
import * as wire from './protocol.generated';

export * from './protocol.generated';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One durable session event (its `type` names its `data`). Under load the server
 * merges consecutive text/reasoning deltas into one assistant/chunk event spanning seq..lastSeq. */
export type SessionEvent = wire.Event;

/** How the transcript reads an event: every SessionEvent is one, and so is an
 * event of a type this client does not know (plugins add some; the reducer
 * skips them). */
export interface EventView {
  seq: number;
  lastSeq?: number | null;
  time?: number;
  type: string;
  data: Record<string, any>;
}

/** "3" or "3-7": the 1-based lines a range covers (a selection ending at the
 * start of a line does not cover that line). */
export function lineLabel(range: wire.Range): string {
  const first = range.start.line + 1;
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return last > first ? `${first}-${last}` : `${first}`;
}

/** The last seq an event covers (a merged chunk covers several). */
export function endSeq(event: EventView): number {
  return typeof event.lastSeq === 'number' ? event.lastSeq : event.seq;
}

export type AgentStatus = wire.StatusParams['status'];

/** agent/turn/revert's answer as the panel shows it (error: the request failed). */
export type RevertOutcome = wire.TurnRevertResult & { error?: string };

export type PermissionAnswer = wire.PermissionResult['answer'];

/** The server hands a message's context items to the model as extra text
 * blocks `<context>\n{json}\n</context>`; the user sees them as chips instead. */
export function isContextBlock(block: wire.Block): boolean {
  return block?.type === 'text' && typeof block.text === 'string' && block.text.startsWith('<context>\n') && block.text.endsWith('</context>');
}

/** What the user typed: the message's text without its context blocks and image placeholders. */
export function userText(message: { content?: wire.Block[] | string } | null | undefined): string {
  const content = message?.content;
  return contentText(Array.isArray(content) ? withoutImagePlaceholders(content.filter((b) => !isContextBlock(b))) : content);
}

/** A session's title for a list: the first message, without context blocks. */
export function sessionTitle(title: string | undefined | null): string {
  return (title ?? '').replace(/<context>[\s\S]*?(<\/context>|$)/g, ' ').replace(/\s+/g, ' ').trim();
}

/** The concatenated text of a message's content (string or blocks). */
export function contentText(content: wire.Block[] | string | undefined | null): string {
  if (content == null) {
    return '';
  }
  if (typeof content === 'string') {
    return content;
  }
  return content
    .filter((b) => b && (b.type === 'text' || typeof b.text === 'string') && b.type !== 'reasoning')
    .map((b) => b.text ?? '')
    .join('');
}
