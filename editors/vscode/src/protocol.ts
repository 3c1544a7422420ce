// The agent_lsp wire protocol v1 as this client speaks it (docs/protocol.md is
// the contract). The wire types and constants are generated from the server's
// schema (protocol.generated.ts); this file adds the helpers the extension
// shares. No vscode import here: the webview and the unit tests share it.

import * as wire from './protocol.generated';

export * from './protocol.generated';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type Position = wire.Position;
export type Range = wire.Range;
export type ContextItem = wire.ContextItem;

export interface Block {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** A user-role message as the inbox and user/message carry it. */
export interface UserMessage {
  role?: string;
  id: string;
  source?: string;
  content: Block[] | string;
  [key: string]: unknown;
}

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
export function lineLabel(range: Range): string {
  const first = range.start.line + 1;
  const last = range.end.character === 0 && range.end.line > range.start.line ? range.end.line : range.end.line + 1;
  return last > first ? `${first}-${last}` : `${first}`;
}

/** The last seq an event covers (a merged chunk covers several). */
export function endSeq(event: EventView): number {
  return typeof event.lastSeq === 'number' ? event.lastSeq : event.seq;
}

export type AgentStatus = 'idle' | 'running';

export interface SessionSummary {
  sessionId: string;
  workspaceUri?: string;
  title?: string;
  createdAt?: number | string;
  updatedAt?: number | string;
  turns?: number;
  status?: AgentStatus | string;
  parentSessionId?: string; // a fork's source, or the session that ran this sub-agent
  parentToolCallId?: string; // a sub-agent's session: the parent's `subagent` call
  excerpt?: string; // listed for a query: the message text that matched
}

export interface Inbox {
  nextTurn: UserMessage[];
  nextStep: UserMessage[];
}

export interface LoadResult {
  sessionId: string;
  workspaceUri?: string;
  status: AgentStatus;
  events: SessionEvent[];
  inbox?: Inbox;
  /** Set when another agent-lsp process has the session open: a read-only snapshot. */
  heldByPid?: number | null;
}

/** One page of agent/session/replay: the log's seqs startSeq..nextSeq-1, deltas merged. */
export interface ReplayPage extends LoadResult {
  startSeq: number;
  nextSeq: number;
  /** The length of the log when answered: the seq of the next live event. */
  endSeq: number;
}

export type PermissionParams = wire.PermissionParams;

/** agent/turn/revert's answer as the panel shows it (error: the request failed). */
export interface RevertOutcome {
  reverted: string[];
  skipped: { path: string; reason: string }[];
  error?: string;
}

export type PermissionAnswer = 'once' | 'session' | 'always' | 'deny';

const M = wire.METHODS;

/** The methods by the names the extension uses (values from the generated table). */
export const Methods = {
  followup: M['agent/followup'],
  steer: M['agent/steer'],
  cancel: M['agent/cancel'],
  inboxRemove: M['agent/inbox/remove'],
  sessionNew: M['agent/session/new'],
  sessionList: M['agent/session/list'],
  sessionLoad: M['agent/session/load'],
  sessionReplay: M['agent/session/replay'],
  sessionDelete: M['agent/session/delete'],
  sessionCompact: M['agent/session/compact'],
  turnRevert: M['agent/turn/revert'],
  sessionMode: M['agent/session/mode'],
  sessionSetModel: M['agent/session/setModel'],
  sessionFork: M['agent/session/fork'],
  sessionRewind: M['agent/session/rewind'],
  inboxUpdate: M['agent/inbox/update'],
  inboxMove: M['agent/inbox/move'],
  inboxPause: M['agent/inbox/pause'],
  modelList: M['agent/model/list'],
  subagentCancel: M['agent/subagent/cancel'],
  skillList: M['agent/skill/list'],
  skillRun: M['agent/skill/run'],
  mcpList: M['agent/mcp/list'],
  mcpAuthorize: M['agent/mcp/authorize'],
  mcpLogout: M['agent/mcp/logout'],
  // server -> client
  sessionEvent: M['session/event'],
  status: M['agent/status'],
  inboxInserted: M['agent/inbox/inserted'],
  inboxDiscarded: M['agent/inbox/discarded'],
  inboxClaimed: M['agent/inbox/claimed'],
  error: M['agent/error'],
  toolProgress: M['agent/tool/progress'],
  subagentStatus: M['agent/subagent/status'],
  permission: M['agent/permission'],
  saveDocuments: M['agent/saveDocuments'],
  elicit: M['agent/elicit'],
  mcpPrompts: M['agent/mcp/prompts'],
  mcpPromptRun: M['agent/mcp/prompt/run'],
} as const;

/** The server hands a message's context items to the model as extra text
 * blocks `<context>\n{json}\n</context>`; the user sees them as chips instead. */
export function isContextBlock(block: Block): boolean {
  return block?.type === 'text' && typeof block.text === 'string' && block.text.startsWith('<context>\n') && block.text.endsWith('</context>');
}

/** What the user typed: the message's text without its context blocks. */
export function userText(message: { content?: Block[] | string } | null | undefined): string {
  const content = message?.content;
  return contentText(Array.isArray(content) ? content.filter((b) => !isContextBlock(b)) : content);
}

/** A session's title for a list: the first message, without context blocks. */
export function sessionTitle(title: string | undefined | null): string {
  return (title ?? '').replace(/<context>[\s\S]*?(<\/context>|$)/g, ' ').replace(/\s+/g, ' ').trim();
}

/** The concatenated text of a message's content (string or blocks). */
export function contentText(content: Block[] | string | undefined | null): string {
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
