// Builders for session events shaped as the server sends them (wire.md,
// agent-loop.md R4.9 order).

import { EventView } from '../src/protocol';

export class Log {
  events: EventView[] = [];
  private time = 1_700_000_000_000;

  add(type: string, data: Record<string, any>): EventView {
    const event = { seq: this.events.length, time: this.time++, type, data };
    this.events.push(event);
    return event;
  }

  chunk(turn: number, step: number, chunk: Record<string, any>): EventView {
    return this.add('assistant/chunk', { turn, step, chunk });
  }

  /** A full text-only turn: followup, stream `text` one character per chunk, complete. */
  textTurn(turn: number, userText: string, text: string, messageId = `msg_${turn}`): void {
    const message = { role: 'user', id: messageId, source: 'user', content: [{ type: 'text', text: userText }] };
    this.add('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [message] });
    this.add('turn/start', { turn });
    this.add('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    this.add('step/start', { turn, step: 1 });
    this.add('user/message', { turn, step: 1, message });
    this.add('request/header', { header: {}, reason: 'initial' });
    this.add('request/context', { provider: 'scripted', model: 'scripted', contextWindow: 1000 });
    const first = this.events.length;
    this.chunk(turn, 1, { type: 'text-start' });
    for (const ch of text) {
      this.chunk(turn, 1, { type: 'text-delta', text: ch });
    }
    this.chunk(turn, 1, { type: 'text-end' });
    this.chunk(turn, 1, { type: 'usage', usage: { inputTokens: 100, outputTokens: 20 } });
    this.chunk(turn, 1, { type: 'finish', kind: 'stop' });
    const seqs = this.events.slice(first).map((e) => e.seq);
    this.add('assistant/message', {
      turn,
      step: 1,
      message: { role: 'assistant', content: [{ type: 'text', text }] },
      usage: { inputTokens: 100, outputTokens: 20 },
      sourceEventSeqs: seqs,
    });
    this.add('step/end', { turn, step: 1 });
    this.add('turn/end', { turn, reason: { kind: 'completed' } });
  }
}
