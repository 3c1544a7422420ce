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
