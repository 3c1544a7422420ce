// The model's stream into the transcript: its chunks (text, reasoning and
// tool calls as they arrive), the assembled assistant message that closes a
// step, and the live, not durable, tool output and sub-agent status.

import { Block, EventView } from './protocol';
import { subagentView } from './subagents';
import { TextItem, Transcript, Usage, closeOpen, get, num, openTextItem, toolItem, toolItemOf, touch } from './transcriptState';

const PROGRESS_CAP = 64 * 1024;

export function argsText(value: unknown): string {
  if (value == null) {
    return '';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function applyChunk(state: Transcript, event: EventView): void {
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

export function applyAssistantMessage(state: Transcript, event: EventView): void {
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

/** What is known of a sub-agent (its card is the tool item of its call: redrawn). */
export function noteSubagent(state: Transcript, callId: string, data: Record<string, any>): void {
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
