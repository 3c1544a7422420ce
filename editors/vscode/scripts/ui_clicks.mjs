// The panel's buttons clicked the way a user clicks them, in the UI run
// (scripts/vscode_run.mjs, mode "ui"; same code-server, workspace and server):
//
// 1. The queue: messages queued while a turn runs are paused and resumed,
//    moved down and up, edited, one is sent now (the running turn stops),
//    one steered into the turn that then runs; what is left runs next.
// 2. "Fork from here" opens a session with the history up to that turn;
//    "Rewind to here" asks, then cuts the conversation there: the cut-off turns
//    stay, dimmed, saying they are no longer in the model's context. The links
//    are never drawn over the message's text.
// 3. A failed turn's Retry runs it again and its answer appears.
// 4. A 401 from the endpoint: the failure offers "Set API Key…", which asks
//    for the key.
//
// The model's replies are keyed by the words of the messages ("when"), so
// these cases do not depend on where they run in the UI run.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const SENT_NOW = 'Sent now: the third message runs, slowly enough to steer another one into it.';

export const clicksScript = [
  { when: 'HOLD-UI', hang: 'Holding the turn open.' },
  { when: 'Q-THREE', text: SENT_NOW, chunkDelayMs: 40 },
  { when: 'Q-ONE', text: 'Steered in: one.' },
  { when: 'Q-TWO edited', text: 'Queued and edited: two.' },
  { when: 'RETRY-UI', fail: 'BAD_REQUEST', message: 'the scripted endpoint refuses this request once' },
  { when: 'RETRY-UI', text: 'Retried: answered.' },
];

const visibleQueue = (panel) => panel.$$eval('#queue .queued', (rows) => rows.map((r) => `${r.querySelector('.queued-kind').textContent}:${r.querySelector('.queued-text').textContent}`));

async function waitQueue(panel, expected) {
  await panel
    .waitForFunction(
      (want) => JSON.stringify([...document.querySelectorAll('#queue .queued')].map((r) => `${r.querySelector('.queued-kind').textContent}:${r.querySelector('.queued-text').textContent}`)) === want,
      JSON.stringify(expected),
      { timeout: 10000 },
    )
    .catch(async () => {
      throw new Error(`the queue shows ${JSON.stringify(await visibleQueue(panel))}, expected ${JSON.stringify(expected)}`);
    });
}

/** A button of a queued message (by the message's exact text), by what it shows. */
const queuedButton = (text, label) => `#queue .queued:has(.queued-text:text-is("${text}")) button:text-is("${label}")`;

/** A turn's hover action, on its first message. */
async function turnAction(panel, text, label) {
  const message = `.item.user:has(.user-text:text-is("${text}"))`;
  await panel.hover(message);
  const overlap = await panel.$eval(message, (node) => {
    const a = node.querySelector('.turn-actions').getBoundingClientRect();
    const t = node.querySelector('.user-text').getBoundingClientRect();
    return a.top < t.bottom && t.top < a.bottom && a.left < t.right && t.left < a.right;
  });
  if (overlap) throw new Error(`the turn's links are drawn over the text of "${text}"`);
  await panel.click(`${message} .turn-actions button:text-is("${label}")`);
}

/** The transcript's messages and turn ends, in order: "text" for a message, "end N" for turn N's end. */
const turnOutline = (panel) =>
  panel.$$eval('#transcript .item.user, #transcript .item.turn-end', (nodes) =>
    nodes.map((n) => (n.classList.contains('user') ? n.querySelector('.user-text').textContent : `end ${/turn (\d+)/.exec(n.textContent)?.[1]}`)),
  );

const userTexts = (panel) => panel.$$eval('#transcript .user .user-text', (nodes) => nodes.map((n) => n.textContent));

/** 1–3, in the panel's session, which must be new (its turn numbers are asserted). */
export async function clicks(page, { panel, log, shot }) {
  if ((await panel.$$('#transcript .item')).length) throw new Error('the clicks need a new session in the panel');

  // 1. The queue's buttons.
  await panel.fill('#input', 'HOLD-UI hold the turn');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("Holding the turn open.")', { timeout: 20000 });
  for (const text of ['Q-ONE', 'Q-TWO', 'Q-THREE']) {
    await panel.fill('#input', text);
    await panel.press('#input', 'Enter');
  }
  await waitQueue(panel, ['queued:Q-ONE', 'queued:Q-TWO', 'queued:Q-THREE']);
  const cut = await panel.$$eval('#queue .queued-text', (nodes) => nodes.filter((n) => n.scrollWidth > n.clientWidth).map((n) => n.textContent));
  if (cut.length) throw new Error(`queued messages cut short at the panel's default width: ${JSON.stringify(cut)}`);
  await panel.click('#queue .queue-head button:text-is("Pause")');
  await panel.waitForSelector('#queue .queue-head:has-text("Queue paused") button:text-is("Resume")', { timeout: 10000 });
  await panel.click(queuedButton('Q-ONE', '↓'));
  await waitQueue(panel, ['queued:Q-TWO', 'queued:Q-ONE', 'queued:Q-THREE']);
  await panel.click(queuedButton('Q-THREE', '↑'));
  await waitQueue(panel, ['queued:Q-TWO', 'queued:Q-THREE', 'queued:Q-ONE']);
  await panel.click(queuedButton('Q-TWO', '✎'));
  const box = await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10000 });
  if ((await box.inputValue()) !== 'Q-TWO') throw new Error(`the edit box holds ${JSON.stringify(await box.inputValue())}, not the queued text`);
  await page.keyboard.press('Control+A');
  await page.keyboard.type('Q-TWO edited');
  await page.keyboard.press('Enter');
  await waitQueue(panel, ['queued:Q-TWO edited', 'queued:Q-THREE', 'queued:Q-ONE']);
  await shot(page, 'queue-actions');
  await panel.click('#queue .queue-head button:text-is("Resume")');
  await panel.waitForSelector('#queue .queue-head:not(:has-text("paused")) button:text-is("Pause")', { timeout: 10000 });
  log('queue: Pause/Resume, ↓ and ↑ reordered it, ✎ edited a message in an input box');

  await panel.click(queuedButton('Q-THREE', 'Send now'));
  await panel.waitForSelector('.turn-end.aborted', { timeout: 10000 });
  await panel.waitForSelector('.assistant:has-text("Sent now: the third")', { timeout: 10000 });
  await waitQueue(panel, ['queued:Q-TWO edited', 'queued:Q-ONE']);
  await panel.click(queuedButton('Q-ONE', 'Steer now'));
  await panel.waitForSelector('.item.user.steer:has(.user-tag:text-is("steering")):has(.user-text:text-is("Q-ONE"))', { timeout: 15000 });
  await panel.waitForSelector('.assistant:has-text("Steered in: one.")', { timeout: 15000 });
  if (!(await panel.$eval('.assistant:has-text("Sent now: the third")', (n) => n.textContent.includes('steer another one into it.')))) {
    throw new Error('the sent-now turn was cut short');
  }
  await panel.waitForSelector('.assistant:has-text("Queued and edited: two.")', { timeout: 15000 });
  await panel.waitForSelector('#queue', { state: 'hidden', timeout: 10000 });
  const turns = await turnOutline(panel);
  const expected = ['HOLD-UI hold the turn', 'end 1', 'Q-THREE', 'Q-ONE', 'end 2', 'Q-TWO edited', 'end 3'];
  if (JSON.stringify(turns) !== JSON.stringify(expected)) throw new Error(`the turns: ${JSON.stringify(turns)}, expected ${JSON.stringify(expected)}`);
  log('queue: "Send now" stopped the running turn and ran its message; "Steer now" entered that turn; the edited one ran next');

  // 2. Fork and rewind at a turn.
  await turnAction(panel, 'Q-THREE', 'Fork from here');
  await page.waitForSelector('.notification-toast:has-text("forked at turn 2")', { timeout: 10000 });
  await panel.waitForFunction(() => ![...document.querySelectorAll('#transcript .user .user-text')].some((n) => n.textContent === 'Q-TWO edited'), null, { timeout: 10000 });
  await panel.waitForSelector('.assistant:has-text("Steered in: one.")', { timeout: 10000 });
  const forked = await userTexts(panel);
  if (JSON.stringify(forked) !== JSON.stringify(['HOLD-UI hold the turn', 'Q-THREE', 'Q-ONE'])) throw new Error(`the fork shows ${JSON.stringify(forked)}`);
  await shot(page, 'forked');
  log('"Fork from here" on turn 2: a new session with turns 1–2, without turn 3');

  await turnAction(panel, 'Q-THREE', 'Rewind to here');
  await page.waitForSelector('.monaco-dialog-box:has-text("Rewind the conversation to before turn 2?")', { timeout: 10000 });
  await page.waitForSelector('.monaco-dialog-box .monaco-button:text-is("Rewind and Revert Files")');
  await page.click('.monaco-dialog-box .monaco-button:text-is("Rewind")');
  await panel.waitForSelector('.notice:has-text("Rewound to before turn 2")', { timeout: 10000 });
  // The cut-off turns stay on screen, dimmed, each message saying it is out of the model's context.
  await panel.waitForSelector('.item.user.rewound:has(.user-text:text-is("Q-THREE")) .rewound-note:has-text("no longer in the model\'s context")', { timeout: 5000 });
  const dimmed = await panel.$$eval('#transcript .item.user', (nodes) => nodes.map((n) => `${n.querySelector('.user-text').textContent}${n.classList.contains('rewound') ? ' (rewound)' : ''}`));
  if (JSON.stringify(dimmed) !== JSON.stringify(['HOLD-UI hold the turn', 'Q-THREE (rewound)', 'Q-ONE (rewound)'])) throw new Error(`after the rewind: ${JSON.stringify(dimmed)}`);
  const opacity = await panel.$eval('.item.assistant.rewound', (n) => Number(getComputedStyle(n).opacity));
  if (!(opacity < 1)) throw new Error('the rewound answer is not dimmed');
  await page.waitForSelector('.notification-toast:has-text("rewound to before turn 2")', { timeout: 10000 });
  await shot(page, 'rewound');
  log('"Rewind to here" on turn 2: asked in a dialog, then the transcript says the conversation is cut there and dims turns 2 on, each message saying it left the model\'s context');

  // 3. Retry on a failed turn.
  await panel.fill('#input', 'RETRY-UI answer after one failure');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.item.error:has-text("BAD_REQUEST") button:text-is("Retry")', { timeout: 20000 });
  if (await panel.$('.assistant:has-text("Retried: answered.")')) throw new Error('the answer came before Retry');
  await panel.click('.item.error:has-text("BAD_REQUEST") button:text-is("Retry")');
  await panel.waitForSelector('.assistant:has-text("Retried: answered.")', { timeout: 20000 });
  log('a failed turn: Retry sent its message again, the answer appeared');
}

/** 4. A refused key: the workspace's model becomes an endpoint that answers 401 (the model stays so). */
export async function refusedKey(page, { panel, ws, data, log, shot }) {
  const seen = [];
  const endpoint = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }));
  });
  await new Promise((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  try {
    const baseUrl = `http://127.0.0.1:${endpoint.address().port}/v1`;
    // the endpoint the key goes to is the user's setting only (code-server's machine settings)
    const machineFile = path.join(data, 'Machine', 'settings.json');
    fs.writeFileSync(machineFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(machineFile, 'utf8')), 'agentLsp.model.baseUrl': baseUrl }, null, 2));
    const settingsFile = path.join(ws, '.vscode', 'settings.json');
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'agentLsp.model': { provider: 'openai', model: 'gpt-ui-refused' } }, null, 2));
    await panel.waitForSelector('#model:text-is("gpt-ui-refused")', { timeout: 20000 });
    await panel.fill('#input', 'is the key right?');
    await panel.press('#input', 'Enter');
    const failure = await panel.waitForSelector('.item.error:has-text("AUTH")', { timeout: 20000 });
    if (!seen.some((r) => r.startsWith('POST'))) throw new Error(`the endpoint got no model request: ${JSON.stringify(seen)}`);
    const said = await failure.innerText();
    await shot(page, 'auth-failed');
    await panel.click('.item.error:has-text("AUTH") button:text-is("Set API Key…")');
    await page.waitForSelector('.quick-input-widget input[placeholder="Which provider is the key for?"]', { timeout: 10000 });
    await page.keyboard.type('openai');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.quick-input-widget input[type="password"]', { state: 'visible', timeout: 10000 });
    await page.keyboard.press('Escape');
    log(`a 401 (${said.replace(/\s+/g, ' ').slice(0, 120)}…): "Set API Key…" asked for the key`);
  } finally {
    endpoint.close();
  }
}
