// The transcript: view state folded from durable session events. One reducer
// serves the live stream (session/event notifications) and replay
// (agent/session/load), so a resumed session looks exactly as it did live.
//
// The state is mutated in place (a reducer per chunk must be cheap at
// 200 chunks/s); every item that changes gets a fresh `rev`, which is how the
// renderer knows what to redraw without rebuilding the DOM.

// The items and their primitives are in transcriptState.ts, the model's
// stream (chunks, messages, live progress) in transcriptStream.ts; this is the
// reducer of the session's events.

import { storedImages } from './images';
import { AgentStatus, ContextItem, RevertOutcome, EventView, Message, contentText, endSeq, userText } from './protocol';
import { modeNotice, modeOf, planEntries } from './plan';
import { modelName, modelNotice } from './models';
import { hookView } from './hooks';
import {
  CompactionItem,
  ErrorItem,
  HookItem,
  NoticeItem,
  PlanItem,
  ToolItem,
  Transcript,
  TurnEndItem,
  UserItem,
  add,
  closeOpen,
  createTranscript,
  get,
  num,
  toolItem,
  touch,
} from './transcriptState';
import { applyAssistantMessage, applyChunk, argsText, noteSubagent } from './transcriptStream';

export * from './transcriptState';
export { applySubagentStatus, applyToolProgress } from './transcriptStream';

const EDIT_TOOLS = /^(edit_file|write_file|create_file|delete_file|rename_file)$/;

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

/** A rewind to before `turn`: that turn and everything after it (the
 * messages, answers and notes between) leave the model's context. */
function markRewound(state: Transcript, turn: number | null): void {
  const from = turn == null ? -1 : state.items.findIndex((item) => item.turn != null && item.turn >= turn);
  if (from < 0) {
    return;
  }
  for (const item of state.items.slice(from)) {
    if (!item.rewound) {
      item.rewound = true;
      touch(state, item);
    }
  }
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
        images: storedImages(message.content),
        // A queued message moved into the running turn ("Steer now") keeps its delivery: it is a steer by the step it entered at.
        steer: message.delivery === 'steer' || (message.delivery !== 'inject' && (num(data.step) ?? 1) > 1),
        note: message.note && typeof message.note.text === 'string' ? { kind: String(message.note.kind ?? ''), text: message.note.text } : null,
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
      markRewound(state, num(data.turn));
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
