// The transcript's state: its items (what the panel draws, one per user
// message, answer, tool call, turn end…), the session facts kept beside them,
// the primitives the reducer changes them with (each change gives the item a
// fresh `rev`, which is how the renderer knows what to redraw), and what is
// read back from it (the context meter, the last answer).

import type { StoredImage } from './images';
import { AgentStatus, ContextItem, RevertOutcome, Message, UsageTotal } from './protocol';
import { PermissionMode, PlanEntry } from './plan';
import { SubagentView } from './subagents';
import { HookView } from './hooks';

/** Tokens (and the estimated cost) as the transcript sums them: a turn's model calls so far, or the server's total. */
export type Usage = Partial<UsageTotal>;

interface ItemBase {
  key: string;
  rev: number;
  turn: number | null;
  /** Cut off by a rewind: still shown, no longer in the model's context. */
  rewound?: boolean;
}

export interface UserItem extends ItemBase {
  kind: 'user';
  messageId: string;
  text: string;
  context: ContextItem[];
  steer: boolean; // sent into a running turn, not as its own turn
  /** The images the message holds (their bytes: agent/session/file). */
  images: StoredImage[];
  /** The text is for the model (a review undo, a skill run): this short note is what the user sees. */
  note?: { kind: string; text: string } | null;
}

export interface TextItem extends ItemBase {
  kind: 'text' | 'reasoning';
  step: number | null;
  text: string;
  streaming: boolean;
  interrupted: boolean;
}

export type ToolStatus = 'preparing' | 'running' | 'done' | 'failed' | 'dropped';

export interface ToolItem extends ItemBase {
  kind: 'tool';
  step: number | null;
  callId: string;
  name: string;
  args: string;
  status: ToolStatus;
  output: string;
  progress: string;
  error: { code?: string; message?: string; name?: string } | null;
  meta: Record<string, any> | null;
}

export interface TurnEndItem extends ItemBase {
  kind: 'turn-end';
  reason: string; // completed | max-tokens | blocked | aborted | error | interrupted | ...
  detail: string;
  hasEdits: boolean;
  usage: Usage | null;
  sessionUsage?: Usage | null; // the session's total at this turn's end
}

export interface ErrorItem extends ItemBase {
  kind: 'error';
  code: string;
  message: string;
}

export interface NoticeItem extends ItemBase {
  kind: 'notice';
  text: string;
}

/** A compaction of the conversation (manual or automatic): what the model
 * keeps instead of the older messages. The transcript still shows them. */
export interface CompactionItem extends ItemBase {
  kind: 'compaction';
  compactionId: string;
  status: 'running' | 'done' | 'failed';
  summary: string;
  /** Tokens of the messages the summary replaced. */
  tokens: number | null;
  error: string;
}

/** The plan as the agent wrote it at this point (todo_write): a checklist. */
export interface PlanItem extends ItemBase {
  kind: 'plan';
  entries: PlanEntry[];
}

/** A user hook that ran (hook/run): one collapsed line of the turn. */
export interface HookItem extends ItemBase, HookView {
  kind: 'hook';
}

export type Item = UserItem | TextItem | ToolItem | TurnEndItem | ErrorItem | NoticeItem | CompactionItem | PlanItem | HookItem;

export interface Transcript {
  sessionId: string | null;
  lastSeq: number;
  rev: number;
  items: Item[];
  index: Map<string, number>;
  status: AgentStatus;
  turnOpen: number | null;
  openText: string | null;
  openReasoning: string | null;
  usage: Usage | null;
  /** Tokens of the running turn's model calls so far (prompt + answer, summed). */
  turnUsage: Usage | null;
  contextWindow: number | null;
  /** The part every request carries (system prompt and tool schemas), in tokens: `request/context`'s `fixedTokens`. */
  fixedTokens: number | null;
  model: string | null;
  /** The session switched its model (agent/session/setModel): `model` is that, not the folder's default. */
  modelSwitched?: boolean;
  inbox: { nextTurn: Message[]; nextStep: Message[] };
  editTurns: Set<number>;
  /** Reverts recorded in the session log (turn/revert), by turn: made here, in
   * another client or before a restart. Paths as logged (absolute). */
  reverts: Map<number, RevertOutcome>;
  /** callId -> key of its latest tool item. */
  toolKeys: Map<string, string>;
  /** The session's permission mode (the last session/mode event). */
  mode: PermissionMode;
  /** The queue is paused (the last agent/inbox/paused event): no queued message starts a turn. */
  queuePaused: boolean;
  /** Sub-agents by the callId of their `subagent` call. */
  subagents: Map<string, SubagentView>;
}


export function createTranscript(sessionId: string | null = null): Transcript {
  return {
    sessionId,
    lastSeq: -1,
    rev: 0,
    items: [],
    index: new Map(),
    status: 'idle',
    turnOpen: null,
    openText: null,
    openReasoning: null,
    usage: null,
    turnUsage: null,
    contextWindow: null,
    fixedTokens: null,
    model: null,
    inbox: { nextTurn: [], nextStep: [] },
    editTurns: new Set(),
    reverts: new Map(),
    toolKeys: new Map(),
    mode: 'default',
    queuePaused: false,
    subagents: new Map(),
  };
}

export function touch<T extends Item>(state: Transcript, item: T): T {
  item.rev = ++state.rev;
  return item;
}

export function get<T extends Item>(state: Transcript, key: string): T | undefined {
  const at = state.index.get(key);
  return at === undefined ? undefined : (state.items[at] as T);
}

export function add<T extends Item>(state: Transcript, item: T): T {
  state.index.set(item.key, state.items.length);
  state.items.push(item);
  return touch(state, item);
}

export function num(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

export function closeOpen(state: Transcript, interrupted = false): void {
  for (const key of [state.openText, state.openReasoning]) {
    const item = key ? get<TextItem>(state, key) : undefined;
    if (item && item.streaming) {
      item.streaming = false;
      item.interrupted = item.interrupted || interrupted;
      touch(state, item);
    }
  }
  state.openText = null;
  state.openReasoning = null;
}

export function openTextItem(state: Transcript, kind: 'text' | 'reasoning', id: string | number, turn: number | null, step: number | null): TextItem {
  const item = add<TextItem>(state, {
    key: `${kind === 'text' ? 't' : 'r'}:${id}`,
    kind,
    rev: 0,
    turn,
    step,
    text: '',
    streaming: true,
    interrupted: false,
  });
  if (kind === 'text') {
    state.openText = item.key;
  } else {
    state.openReasoning = item.key;
  }
  return item;
}

/** The tool item of a call id in this turn. Call ids are unique only within
 * a turn (a restarted server or another provider may reuse "call_1"), so a
 * reused id in a later turn gets an item of its own. */
export function toolItem(state: Transcript, callId: string, turn: number | null, step: number | null): ToolItem {
  const existing = toolItemOf(state, callId);
  if (existing && (turn == null || existing.turn == null || existing.turn === turn)) {
    return existing;
  }
  let key = `c:${callId}`;
  for (let n = 2; state.index.has(key); n++) {
    key = `c:${callId}#${n}`;
  }
  state.toolKeys.set(callId, key);
  return add<ToolItem>(state, {
    key,
    kind: 'tool',
    rev: 0,
    turn,
    step,
    callId,
    name: '',
    args: '',
    status: 'preparing',
    output: '',
    progress: '',
    error: null,
    meta: null,
  });
}

/** The latest tool item of a call id. */
export function toolItemOf(state: Transcript, callId: string): ToolItem | undefined {
  const key = state.toolKeys.get(callId);
  return key ? get<ToolItem>(state, key) : undefined;
}

export interface Meter {
  used: number;
  window: number | null;
  percent: number | null;
  /** Of `used`, what every request carries (system prompt and tools); null when the server did not say. */
  fixed: number | null;
}

/** Context use after the last model call: its prompt plus its answer (the
 * next request carries both). Cumulative session tokens would overstate it.
 * Before the first answer, the fixed part the first request carries. */
export function contextMeter(state: Transcript): Meter | null {
  const fixed = state.fixedTokens;
  if (!state.usage && fixed == null) {
    return null;
  }
  const used = state.usage ? (state.usage.inputTokens ?? 0) + (state.usage.outputTokens ?? 0) : (fixed ?? 0);
  const window = state.contextWindow;
  return { used, window, percent: window ? Math.min(100, Math.round((used / window) * 100)) : null, fixed };
}

/** The last assistant text of the transcript (for notifications and tests). */
export function lastAssistantText(state: Transcript): string {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind === 'text') {
      return item.text;
    }
  }
  return '';
}

/** Items changed after `sinceRev`, in transcript order. */
export function changedSince(state: Transcript, sinceRev: number): Item[] {
  return state.items.filter((item) => item.rev > sinceRev);
}

/** 950 → "950", 15_300 → "15.3k", 128_000 → "128k", 1_048_576 → "1M". */
export function formatTokens(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    const k = n / 1000;
    return `${k < 100 ? Number(k.toFixed(1)) : Math.round(k)}k`;
  }
  return `${Number((n / 1_000_000).toFixed(1))}M`;
}
