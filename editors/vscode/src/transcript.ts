// The transcript: view state folded from durable session events. One reducer
// serves the live stream (session/event notifications) and replay
// (agent/session/load), so a resumed session looks exactly as it did live.
//
// The state is mutated in place (a reducer per chunk must be cheap at
// 200 chunks/s); every item that changes gets a fresh `rev`, which is how the
// renderer knows what to redraw without rebuilding the DOM.

import { AgentStatus, Block, ContextItem, RevertOutcome, EventView, Message, UsageTotal, contentText, endSeq, userText } from './protocol';
import { PermissionMode, PlanEntry, modeNotice, modeOf, planEntries } from './plan';
import { modelName, modelNotice } from './models';
import { SubagentView, subagentView } from './subagents';
import { HookView, hookView } from './hooks';

/** Tokens (and the estimated cost) as the transcript sums them: a turn's model calls so far, or the server's total. */
export type Usage = Partial<UsageTotal>;

interface ItemBase {
  key: string;
  rev: number;
  turn: number | null;
}

export interface UserItem extends ItemBase {
  kind: 'user';
  messageId: string;
  text: string;
  context: ContextItem[];
  steer: boolean; // sent into a running turn, not as its own turn
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

const PROGRESS_CAP = 64 * 1024;
const EDIT_TOOLS = /^(edit_file|write_file|create_file|delete_file|rename_file)$/;

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

export interface ApplyResult {
  applied: number;
  /** True when events were missing before these (the caller should reload the session). */
  gap: boolean;
}

/** Fold events into the transcript. Already-seen seqs are skipped, so a
 * replay overlapping the live stream is harmless. */
export function applyEvents(state: Transcript, events: EventView[]): ApplyResult {
  let applied = 0;
  let gap = false;
  for (const event of events) {
    if (typeof event.seq === 'number') {
      if (event.seq <= state.lastSeq) {
        continue;
      }
      if (event.seq !== state.lastSeq + 1) {
        gap = true;
      }
      state.lastSeq = endSeq(event);
    }
    applyEvent(state, event);
    applied++;
  }
  return { applied, gap };
}

function touch<T extends Item>(state: Transcript, item: T): T {
  item.rev = ++state.rev;
  return item;
}

function get<T extends Item>(state: Transcript, key: string): T | undefined {
  const at = state.index.get(key);
  return at === undefined ? undefined : (state.items[at] as T);
}

function add<T extends Item>(state: Transcript, item: T): T {
  state.index.set(item.key, state.items.length);
  state.items.push(item);
  return touch(state, item);
}

function num(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

function closeOpen(state: Transcript, interrupted = false): void {
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

function openTextItem(state: Transcript, kind: 'text' | 'reasoning', id: string | number, turn: number | null, step: number | null): TextItem {
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
function toolItem(state: Transcript, callId: string, turn: number | null, step: number | null): ToolItem {
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

function argsText(value: unknown): string {
  if (value == null) {
    return '';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function applyChunk(state: Transcript, event: EventView): void {
  const data = event.data ?? {};
  const chunk = data.chunk ?? {};
  const turn = num(data.turn);
  const step = num(data.step);
  switch (chunk.type) {
    case 'text-start':
      closeOpen(state);
      openTextItem(state, 'text', event.seq, turn, step);
      break;
    case 'text-delta': {
      const item = (state.openText && get<TextItem>(state, state.openText)) || openTextItem(state, 'text', event.seq, turn, step);
      item.text += chunk.text ?? '';
      touch(state, item);
      break;
    }
    case 'reasoning-start':
      closeOpen(state);
      openTextItem(state, 'reasoning', event.seq, turn, step);
      break;
    case 'reasoning-delta': {
      const item =
        (state.openReasoning && get<TextItem>(state, state.openReasoning)) || openTextItem(state, 'reasoning', event.seq, turn, step);
      item.text += chunk.text ?? '';
      touch(state, item);
      break;
    }
    case 'text-end':
    case 'reasoning-end': {
      const key = chunk.type === 'text-end' ? state.openText : state.openReasoning;
      const item = key ? get<TextItem>(state, key) : undefined;
      if (item) {
        item.streaming = false;
        touch(state, item);
      }
      if (chunk.type === 'text-end') {
        state.openText = null;
      } else {
        state.openReasoning = null;
      }
      break;
    }
    case 'tool-call-start': {
      const item = toolItem(state, String(chunk.id), turn, step);
      item.name = chunk.name ?? item.name;
      touch(state, item);
      break;
    }
    case 'tool-call-delta': {
      const item = toolItem(state, String(chunk.id), turn, step);
      if (item.status === 'preparing') {
        item.args += chunk.delta ?? '';
        touch(state, item);
      }
      break;
    }
    case 'usage':
      if (chunk.usage) {
        state.usage = chunk.usage;
      }
      break;
    case 'finish':
      closeOpen(state, chunk.kind === 'aborted');
      break;
    default:
      break;
  }
}

function applyAssistantMessage(state: Transcript, event: EventView): void {
  const data = event.data ?? {};
  const turn = num(data.turn);
  const step = num(data.step);
  closeOpen(state, !!data.interrupted);
  if (data.usage) {
    state.usage = data.usage;
    state.turnUsage = addUsage(state.turnUsage, data.usage);
  }
  const message = data.message ?? {};
  const blocks: Block[] = Array.isArray(message.content) ? message.content : [];
  // Chunks normally built the items already; a message with no chunks
  // behind it (e.g. after compaction) is rendered from its content.
  const fromChunks = Array.isArray(data.sourceEventSeqs) ? data.sourceEventSeqs.length > 0 : true;
  if (fromChunks && data.interrupted) {
    // A cancel cut the answer after its last block closed: mark that block.
    for (let i = state.items.length - 1; i >= 0; i--) {
      const item = state.items[i];
      if ((item.kind === 'text' || item.kind === 'reasoning') && item.turn === turn && item.step === step) {
        item.interrupted = true;
        touch(state, item);
        break;
      }
    }
  }
  if (!fromChunks) {
    blocks.forEach((block, i) => {
      if (block.type === 'text' || block.type === 'reasoning') {
        const item = openTextItem(state, block.type === 'text' ? 'text' : 'reasoning', `${event.seq}.${i}`, turn, step);
        item.text = block.text ?? '';
        item.streaming = false;
        item.interrupted = !!data.interrupted;
      }
    });
    state.openText = null;
    state.openReasoning = null;
  }
  for (const block of blocks) {
    if (block.type === 'tool-call' && typeof block.id === 'string') {
      const item = toolItem(state, block.id, turn, step);
      item.name = (block.name as string) ?? item.name;
      if (item.status === 'preparing') {
        item.args = argsText(block.arguments);
      }
      touch(state, item);
    }
  }
}

function addUsage(total: Usage | null, more: Usage): Usage {
  const sum: Usage = { ...(total ?? {}) };
  for (const key of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    if (typeof more[key] === 'number') {
      sum[key] = (sum[key] ?? 0) + more[key]!;
    }
  }
  return sum;
}

function compactionItem(state: Transcript, data: Record<string, any>, seq: number): CompactionItem {
  const id = String(data.compactionId ?? seq);
  return (
    get<CompactionItem>(state, `k:${id}`) ??
    add<CompactionItem>(state, { key: `k:${id}`, kind: 'compaction', rev: 0, turn: state.turnOpen, compactionId: id, status: 'running', summary: '', tokens: null, error: '' })
  );
}

/** A turn with edits offers "Revert this turn": a file tool, or any tool whose
 * result carries a diff or the journal records the server reverts from. */
function noteEdit(state: Transcript, item: ToolItem): void {
  const meta = item.meta ?? {};
  const changed = typeof meta.diff === 'string' || (Array.isArray(meta.journal) && meta.journal.length > 0);
  if (item.turn != null && (EDIT_TOOLS.test(item.name) || changed)) {
    state.editTurns.add(item.turn);
  }
}

function reasonOf(reason: any): { kind: string; detail: string; error: { code: string; message: string } | null } {
  if (typeof reason === 'string') {
    return { kind: reason, detail: '', error: null };
  }
  const kind = String(reason?.kind ?? 'completed');
  if (kind === 'error') {
    const err = reason.error ?? {};
    return { kind, detail: String(err.message ?? ''), error: { code: String(err.code ?? 'UNKNOWN'), message: String(err.message ?? '') } };
  }
  if (kind === 'aborted') {
    const why = reason.reason?.kind ?? reason.reason ?? 'user';
    return { kind, detail: why === 'user' ? 'cancelled' : `aborted (${typeof why === 'string' ? why : JSON.stringify(why)})`, error: null };
  }
  return { kind, detail: '', error: null };
}

/** A logged revert of a turn. A later revert of the same turn (changes made
 * after the first, while it still ran) adds to what the first reverted. The
 * turn's footer is redrawn: it shows the result instead of the button. */
function noteRevert(state: Transcript, data: Record<string, any>): void {
  const turn = num(data.turn);
  if (turn == null) {
    return;
  }
  const reverted = Array.isArray(data.reverted) ? data.reverted.map(String) : [];
  const skipped = Array.isArray(data.skipped)
    ? data.skipped.map((x: any) => ({ path: String(x?.path ?? ''), reason: String(x?.reason ?? '') }))
    : [];
  const before = state.reverts.get(turn);
  const merged: RevertOutcome = before
    ? {
        reverted: [...before.reverted, ...reverted.filter((p: string) => !before.reverted.includes(p))],
        skipped: [...before.skipped.filter((x) => !reverted.includes(x.path)), ...skipped],
      }
    : { reverted, skipped };
  state.reverts.set(turn, merged);
  state.editTurns.add(turn);
  for (const item of state.items) {
    if (item.kind === 'turn-end' && item.turn === turn) {
      item.hasEdits = true;
      touch(state, item);
    }
  }
}

function spliceInbox(state: Transcript, data: Record<string, any>): void {
  const list = data.target === 'next-step' ? state.inbox.nextStep : data.target === 'next-turn' ? state.inbox.nextTurn : null;
  if (!list) {
    return;
  }
  const start = typeof data.start === 'number' ? data.start : list.length;
  const inserted: Message[] = Array.isArray(data.inserted) ? data.inserted : [];
  list.splice(start, typeof data.removedCount === 'number' ? data.removedCount : 0, ...inserted);
}

function removeFromInbox(state: Transcript, messageId: string): void {
  state.inbox.nextTurn = state.inbox.nextTurn.filter((m) => m.id !== messageId);
  state.inbox.nextStep = state.inbox.nextStep.filter((m) => m.id !== messageId);
}

function contextOf(message: any): ContextItem[] {
  const context = message?.context ?? message?.meta?.context;
  return Array.isArray(context) ? context.filter((c: any) => c && typeof c.uri === 'string') : [];
}

export function applyEvent(state: Transcript, event: EventView): void {
  const data = event.data ?? {};
  switch (event.type) {
    case 'assistant/chunk':
      applyChunk(state, event);
      break;
    case 'assistant/message':
      applyAssistantMessage(state, event);
      break;
    case 'turn/start':
      state.turnOpen = num(data.turn);
      state.turnUsage = null;
      break;
    case 'step/end':
      closeOpen(state);
      break;
    case 'user/message': {
      const message = data.message ?? {};
      if (message.source === 'compaction') {
        break; // the summary the model gets instead of older messages: shown by its compaction item
      }
      if (message.source === 'runtime-context') {
        break; // the editor state the server told the model (the open files), not something the user said
      }
      const id = String(message.id ?? `seq${event.seq}`);
      add<UserItem>(state, {
        key: `u:${id}:${event.seq}`,
        kind: 'user',
        rev: 0,
        turn: num(data.turn) ?? state.turnOpen,
        messageId: id,
        text: userText(message),
        context: contextOf(message),
        // A queued message moved into the running turn ("Steer now") keeps its delivery: it is a steer by the step it entered at.
        steer: message.delivery === 'steer' || (message.delivery !== 'inject' && (num(data.step) ?? 1) > 1),
      });
      removeFromInbox(state, id);
      break;
    }
    case 'tool/call': {
      const item = toolItem(state, String(data.callId), num(data.turn), num(data.step));
      item.name = data.name ?? item.name;
      item.args = argsText(data.arguments);
      if (item.status === 'preparing') {
        item.status = 'running';
      }
      touch(state, item);
      noteEdit(state, item);
      break;
    }
    case 'tool/result': {
      if (data.surfaceOp?.kind === 'replace') {
        break; // a pruned copy for the model's context; the user keeps the full output
      }
      const message = data.message ?? {};
      const callId = String(message.callId ?? data.callId);
      const item = toolItem(state, callId, num(data.turn), num(data.step));
      item.name = item.name || message.name || '';
      item.output = contentText(message.content);
      item.error = data.error ?? null;
      item.meta = data.meta ?? null;
      // A command that exited non-zero ran, but did not succeed: not a green check.
      const exitCode = item.meta?.exitCode;
      item.status = message.isError || data.error || (typeof exitCode === 'number' && exitCode !== 0) ? 'failed' : 'done';
      if (data.meta?.subagent) {
        noteSubagent(state, callId, data.meta.subagent);
      }
      touch(state, item);
      if (item.status === 'done') {
        noteEdit(state, item);
      }
      break;
    }
    case 'turn/end': {
      closeOpen(state);
      const turn = num(data.turn) ?? state.turnOpen;
      const { kind, detail, error } = reasonOf(data.reason);
      for (const item of state.items) {
        if (item.kind === 'tool' && item.turn === turn && (item.status === 'preparing' || item.status === 'running')) {
          item.status = 'dropped';
          touch(state, item);
        }
      }
      if (error) {
        add<ErrorItem>(state, { key: `x:${event.seq}`, kind: 'error', rev: 0, turn, code: error.code, message: error.message });
      }
      add<TurnEndItem>(state, {
        key: `e:${event.seq}`,
        kind: 'turn-end',
        rev: 0,
        turn,
        reason: kind,
        detail,
        hasEdits: turn != null && state.editTurns.has(turn),
        usage: data.usage ?? state.turnUsage, // the server's turn total has the cost estimate too
        sessionUsage: data.sessionUsage ?? null,
      });
      state.turnOpen = null;
      state.turnUsage = null;
      break;
    }
    case 'turn/revert':
      noteRevert(state, data);
      break;
    case 'plan/update':
      add<PlanItem>(state, { key: `p:${event.seq}`, kind: 'plan', rev: 0, turn: num(data.turn) ?? state.turnOpen, entries: planEntries(data) });
      break;
    case 'session/mode':
      state.mode = modeOf(data.mode);
      add<NoticeItem>(state, { key: `n:${event.seq}`, kind: 'notice', rev: 0, turn: state.turnOpen, text: modeNotice(data) });
      break;
    case 'hook/run':
      add<HookItem>(state, { key: `h:${event.seq}`, kind: 'hook', rev: 0, turn: state.turnOpen, ...hookView(data) });
      break;
    case 'session/rewind':
      add<NoticeItem>(state, {
        key: `n:${event.seq}`,
        kind: 'notice',
        rev: 0,
        turn: state.turnOpen,
        text: `Rewound to before turn ${data.turn ?? '?'}: the agent no longer sees it or what followed.`,
      });
      break;
    case 'agent/inbox/paused':
      state.queuePaused = data.paused === true;
      break;
    case 'session/model':
      state.model = modelName(data.provider, data.model);
      state.modelSwitched = true;
      add<NoticeItem>(state, { key: `n:${event.seq}`, kind: 'notice', rev: 0, turn: state.turnOpen, text: modelNotice(data) });
      break;
    case 'subagent/start':
      noteSubagent(state, String(data.callId), data);
      break;
    case 'agent/inbox/spliced':
      spliceInbox(state, data);
      break;
    case 'request/context':
      if (typeof data.contextWindow === 'number') {
        state.contextWindow = data.contextWindow;
      }
      if (typeof data.fixedTokens === 'number') {
        state.fixedTokens = data.fixedTokens;
      }
      if (data.provider || data.model) {
        state.model = modelName(data.provider, data.model);
      }
      break;
    case 'llm/retry': {
      const err = data.error ?? data.failure ?? {};
      const attempt = data.retry != null ? ` (retry ${data.retry})` : data.attempt != null ? ` (attempt ${data.attempt})` : '';
      const wait = typeof data.delayMs === 'number' ? ` in ${(data.delayMs / 1000).toFixed(1)} s` : '';
      const text = `Retrying${attempt}${wait}${err.code ? ` after ${err.code}` : ''}${err.message ? `: ${err.message}` : ''}`;
      // One notice per step, updated in place: the retries of a step are one story, not a line each.
      const key = `r:${data.turn ?? state.turnOpen}:${data.step ?? ''}`;
      const shown = get<NoticeItem>(state, key);
      if (shown) {
        shown.text = text;
        touch(state, shown);
      } else {
        add<NoticeItem>(state, { key, kind: 'notice', rev: 0, turn: state.turnOpen, text });
      }
      break;
    }
    case 'compaction/start':
      touch(state, compactionItem(state, data, event.seq));
      break;
    case 'compaction/summary': {
      const item = compactionItem(state, data, event.seq);
      item.summary = typeof data.summary === 'string' ? data.summary : contentText(data.summary);
      item.tokens = num(data.shadowedTokenCount);
      touch(state, item);
      break;
    }
    case 'compaction/end': {
      const item = compactionItem(state, data, event.seq);
      item.status = data.error ? 'failed' : 'done';
      item.error = data.error ? String(data.error.message ?? data.error.kind ?? 'failed') : '';
      touch(state, item);
      break;
    }
    default:
      break;
  }
}

/** What is known of a sub-agent (its card is the tool item of its call: redrawn). */
function noteSubagent(state: Transcript, callId: string, data: Record<string, any>): void {
  state.subagents.set(callId, subagentView(callId, data, state.subagents.get(callId)));
  const item = toolItemOf(state, callId);
  if (item) {
    touch(state, item);
  }
}

/** A sub-agent's live status (agent/subagent/status); not durable: the tool result has the end. */
export function applySubagentStatus(state: Transcript, params: Record<string, any>): void {
  if (typeof params?.callId === 'string') {
    noteSubagent(state, params.callId, params);
  }
}

/** Live tool output (agent/tool/progress); not durable, so not replayed. */
export function applyToolProgress(state: Transcript, callId: string, data: Record<string, any>): void {
  const item = toolItemOf(state, callId);
  if (!item) {
    return;
  }
  const text = typeof data?.text === 'string' ? data.text : typeof data?.output === 'string' ? data.output : '';
  if (!text) {
    return;
  }
  item.progress += text;
  if (item.progress.length > PROGRESS_CAP) {
    item.progress = item.progress.slice(item.progress.length - PROGRESS_CAP);
  }
  touch(state, item);
}

/** Replace the state with a loaded session (agent/session/load). */
export function loadTranscript(sessionId: string, events: EventView[], status: AgentStatus, inbox?: { nextTurn: Message[]; nextStep: Message[] }): Transcript {
  const state = createTranscript(sessionId);
  applyEvents(state, events);
  state.status = status;
  if (inbox) {
    state.inbox = { nextTurn: [...(inbox.nextTurn ?? [])], nextStep: [...(inbox.nextStep ?? [])] };
  }
  return state;
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
