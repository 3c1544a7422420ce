// How much the panel's per-chunk work costs: the reducer folding text-delta
// chunks, and re-rendering the streaming item's markdown once per frame.
// Run after `npm run compile-tests`:  node bench/transcript_bench.mjs
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { applyEvents, createTranscript } = require('../out/src/transcript.js');
const { renderMarkdown } = require('../out/src/markdown.js');

function chunkEvents(n) {
  const events = [{ seq: 0, time: 0, type: 'turn/start', data: { turn: 1 } }];
  events.push({ seq: 1, time: 0, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-start' } } });
  for (let i = 0; i < n; i++) {
    const text = i % 40 === 39 ? '\n\n' : i % 7 === 0 ? ' **bold** ' : 'word ';
    events.push({ seq: i + 2, time: 0, type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text-delta', text } } });
  }
  return events;
}

const N = 100_000;
const events = chunkEvents(N);
const state = createTranscript('bench');
let t = performance.now();
for (let i = 0; i < events.length; i += 10) {
  applyEvents(state, events.slice(i, i + 10)); // ~ what one notification carries
}
let ms = performance.now() - t;
console.log(`reducer: ${N} text chunks in ${ms.toFixed(1)} ms = ${(N / (ms / 1000) / 1e6).toFixed(2)} M chunks/s`);

const text = state.items[0].text;
for (const size of [2_000, 20_000, 100_000]) {
  const source = text.slice(0, size);
  const reps = size > 50_000 ? 10 : 50;
  t = performance.now();
  for (let i = 0; i < reps; i++) renderMarkdown(source);
  ms = (performance.now() - t) / reps;
  console.log(`markdown re-render of the streaming item, ${size.toLocaleString()} chars: ${ms.toFixed(2)} ms per frame`);
}
