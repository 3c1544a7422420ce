// The agent_lsp wire protocol v1 as this client speaks it (docs/protocol.md is
// the contract; this file only names what the extension uses). No vscode
// import here: the webview and the unit tests share it.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface ContextItem {
  kind: 'file' | 'selection' | 'diagnostic';
  uri: string;
  range?: Range;
  text?: string;
  message?: string;
}

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

/** One durable session event. Under load the server merges consecutive
 * text/reasoning deltas into one assistant/chunk event spanning seq..lastSeq. */
export interface SessionEvent {
  seq: number;
  lastSeq?: number;
  time: number;
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
export function endSeq(event: SessionEvent): number {
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

export interface PermissionParams {
  sessionId?: string;
  tool: string;
  kind: string;
  title: string;
  detail?: string;
  command?: string;
  path?: string;
}

/** agent/turn/revert's answer as the panel shows it (error: the request failed). */
export interface RevertOutcome {
  reverted: string[];
  skipped: { path: string; reason: string }[];
  error?: string;
}

export type PermissionAnswer = 'once' | 'session' | 'always' | 'deny';

export const Methods = {
  followup: 'agent/followup',
  steer: 'agent/steer',
  cancel: 'agent/cancel',
  inboxRemove: 'agent/inbox/remove',
  sessionNew: 'agent/session/new',
  sessionList: 'agent/session/list',
  sessionLoad: 'agent/session/load',
  sessionDelete: 'agent/session/delete',
  sessionCompact: 'agent/session/compact',
  turnRevert: 'agent/turn/revert',
  // server -> client
  sessionEvent: 'session/event',
  status: 'agent/status',
  inboxInserted: 'agent/inbox/inserted',
  inboxDiscarded: 'agent/inbox/discarded',
  inboxClaimed: 'agent/inbox/claimed',
  error: 'agent/error',
  toolProgress: 'agent/tool/progress',
  permission: 'agent/permission',
  saveDocuments: 'agent/saveDocuments',
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
