// A 5,000-line answer streamed into the panel in real VS Code (code-server,
// Chromium), while the user types in the panel's input: prints the frames the
// panel drew (count, p95 and longest gap), its long tasks, and how long a key
// took to reach the screen. Figures only, nothing asserted.
//
//   npm run package && node scripts/vscode_run.mjs bench
//
// (The run's setup is that of the UI tests: scripts/vscode_run.mjs.)

const LINES = 5000;

function answerLines() {
  const lines = [];
  for (let i = 0; lines.length < LINES; i++) {
    if (i % 10 === 9) {
      lines.push('```python', ...Array.from({ length: 8 }, (_, j) => `    value_${j} = compute(${i}, ${j})  # step ${j}`), '```', '');
    } else if (i % 10 === 4) {
      lines.push(...Array.from({ length: 5 }, (_, j) => `- item ${j} of list ${i} with \`code\` and **bold**`), '');
    } else {
      lines.push(`Paragraph ${i} of a long answer, with *emphasis*, \`inline code\` and a [link](hello.py).`, '');
    }
  }
  return [...lines.slice(0, LINES - 1), 'BENCH-END'];
}

/** One chunk per line, a millisecond apart: about what a fast model sends. */
export const benchScript = [
  {
    when: 'BENCH-STREAM',
    chunkDelayMs: 1,
    chunks: [
      { type: 'text-start' },
      ...answerLines().map((line) => ({ type: 'text-delta', text: `${line}\n` })),
      { type: 'text-end' },
      { type: 'usage', usage: { inputTokens: 100, outputTokens: 60000 } },
      { type: 'finish', kind: 'stop' },
    ],
  },
];

const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : 0);

export async function streamBench(page, { log, panelFrame }) {
  await page.waitForSelector('.statusbar-item:has-text("Agent"):not(:has-text("starting"))', { timeout: 60000 });
  await page.click('.statusbar-item:has-text("Agent")');
  const panel = await panelFrame(page);
  await panel.waitForSelector('#banner[hidden]', { state: 'attached', timeout: 30000 });
  await panel.evaluate(() => {
    const m = (window.benchMetrics = { frames: [], keys: [], longTasks: [], running: true });
    const tick = (t) => {
      m.frames.push(t);
      if (m.running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    new PerformanceObserver((list) => m.longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
    // A key's latency: from the key event to the frame after the one that draws it.
    document.querySelector('#input').addEventListener('keydown', (e) => {
      const at = e.timeStamp;
      requestAnimationFrame(() => requestAnimationFrame(() => m.keys.push(performance.now() - at)));
    }, true);
  });
  await panel.fill('#input', 'BENCH-STREAM say it all');
  const t0 = Date.now();
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant', { timeout: 20000 });
  const done = panel.waitForSelector('.assistant:not(.streaming):has-text("BENCH-END")', { timeout: 300000 });
  let finished = false;
  done.then(() => (finished = true), () => (finished = true));
  while (!finished) {
    await page.keyboard.type('x');
    await new Promise((r) => setTimeout(r, 50));
  }
  await done;
  const ms = Date.now() - t0;
  const m = await panel.evaluate(() => {
    const m = window.benchMetrics;
    m.running = false;
    return { frames: m.frames, keys: m.keys, longTasks: m.longTasks };
  });
  const gaps = m.frames.slice(1).map((t, i) => t - m.frames[i]).filter((_, i) => m.frames[i + 1] - m.frames[0] <= ms);
  const long = m.longTasks.reduce((a, b) => a + b, 0);
  log(`${LINES}-line answer: streamed and drawn in ${(ms / 1000).toFixed(1)} s`);
  log(`frames: ${gaps.length + 1}, gap p50 ${pct(gaps, 50).toFixed(0)} ms, p95 ${pct(gaps, 95).toFixed(0)} ms, max ${Math.max(0, ...gaps).toFixed(0)} ms`);
  log(`long tasks: ${m.longTasks.length}, ${(long / 1000).toFixed(2)} s in all`);
  log(`keys typed meanwhile: ${m.keys.length}, latency p50 ${pct(m.keys, 50).toFixed(0)} ms, p95 ${pct(m.keys, 95).toFixed(0)} ms, max ${Math.max(0, ...m.keys).toFixed(0)} ms`);
}
