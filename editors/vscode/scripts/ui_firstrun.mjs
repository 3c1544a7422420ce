// The UI checks of a first run and of the transcript's code blocks, driven
// by scripts/vscode_run.mjs (mode "firstrun"): the installed .vsix in
// code-server, the real server, a workspace with no model configured.
//
// 1. No model configured: the panel's banner says the built-in demo model
//    answers and offers setup; the header names the model.
// 2. A model configured (the scripted one, with a script): the banner goes,
//    a code block is highlighted, with Copy and Insert (Insert puts the code at
//    the editor's cursor) and no per-line backgrounds; a command that exited
//    non-zero is a ✗ with its exit code; "↓ New activity" appears when the
//    user scrolled up while the answer streams; one status bar item.
// 3. With the panel closed, a message sent from the command palette ends in a
//    "done" notification whose text has no raw markdown.

import fs from 'node:fs';
import path from 'node:path';

export const CODE_ANSWER = 'Here is the helper:\n\n```python\ndef double(x):\n    return x * 2\n```\n\nTry `double(2)` in a shell.';
const LONG = Array.from({ length: 60 }, (_, i) => `Paragraph ${i + 1} of a long answer.`).join('\n\n') + '\n\nLONG-END';

export const firstRunScript = [
  { text: CODE_ANSWER },
  { text: 'Checking.', tools: [{ name: 'run_command', arguments: { command: 'echo failing; exit 3' } }] },
  { text: 'The check failed.' },
  { text: LONG, chunkDelayMs: 8 },
  { text: '**Renamed** `old_name` to `new_name` in [hello.py](hello.py).\n\nNothing else changed.' },
];

export async function firstRun(page, { ws, log, panelFrame, shot, openHelloPy }) {
  const status = await openHelloPy(page);
  await status.click();
  const panel = await panelFrame(page);

  // 1. Nothing configured.
  await panel.waitForSelector('#demo-banner:not([hidden]):has-text("No model is configured: the built-in demo model answers")', { timeout: 20000 });
  await panel.waitForSelector('#demo-banner button:has-text("Set up a model")');
  await panel.waitForSelector('#model:not([hidden]):text-is("demo model")');
  await shot(page, 'firstrun-demo');
  log('no model configured: the banner says so and offers setup; the header says "demo model"');

  // 2. The user configures a model (here: the scripted one, with a script).
  const settingsFile = path.join(ws, '.vscode', 'settings.json');
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'agentLsp.model': { provider: 'scripted', script: firstRunScript } }, null, 2));
  await panel.waitForSelector('#demo-banner', { state: 'hidden', timeout: 20000 });
  await panel.waitForSelector('#model:text-is("scripted")', { timeout: 10000 });
  log('a model configured: the banner went, the header names it');

  await panel.fill('#input', 'write a helper');
  await panel.press('#input', 'Enter');
  const block = await panel.waitForSelector('.assistant .code-block[data-language="python"]', { timeout: 20000 });
  await panel.waitForSelector('.assistant .code-block code .hljs-keyword:text-is("def")');
  const style = await block.$eval('pre code', (code) => {
    const s = getComputedStyle(code);
    return { background: s.backgroundColor, padding: s.padding };
  });
  if (style.background !== 'rgba(0, 0, 0, 0)' || style.padding !== '0px') {
    throw new Error(`the code inside the block has its own box (per-line backgrounds): ${JSON.stringify(style)}`);
  }
  const inline = await panel.$eval('.assistant p code', (code) => code.textContent);
  if (inline !== 'double(2)') throw new Error(`inline code: ${inline}`);
  await shot(page, 'firstrun-code');
  await page.click('.monaco-editor .view-lines');
  await page.keyboard.press('Control+End');
  await block.hover();
  await panel.click('.code-block button[data-code-action="insert"]');
  await page.waitForSelector('.view-lines:has-text("def double(x):")', { timeout: 10000 });
  await panel.click('.code-block button[data-code-action="copy"]');
  await panel.waitForSelector('.code-block button[data-code-action="copy"]:text-is("Copied")');
  log('a code block: highlighted, no per-line boxes, Insert put it at the cursor, Copy says so');

  await panel.fill('#input', 'check it');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("The check failed.")', { timeout: 20000 });
  const failed = await panel.$eval('.tool:has-text("exit 3")', (n) => ({ cls: n.className, icon: n.querySelector('.tool-icon')?.textContent, why: n.querySelector('.tool-error')?.textContent }));
  if (!failed.cls.includes('failed') || failed.icon !== '✗' || !failed.why?.includes('exited with 3')) {
    throw new Error(`a command that exited 3 is shown as ${JSON.stringify(failed)}`);
  }
  log(`a command that exited non-zero: ✗ and "${failed.why}"`);

  await panel.fill('#input', 'say a lot');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("Paragraph 3 of")', { timeout: 20000 });
  const items = await page.$$eval('.statusbar-item', (nodes) => nodes.map((n) => n.textContent ?? '').filter((t) => /agent/i.test(t)));
  if (items.length !== 1) throw new Error(`status bar items about the agent while it runs: ${JSON.stringify(items)}`);
  await panel.waitForFunction(() => {
    const t = document.querySelector('#transcript');
    return t.scrollHeight > t.clientHeight * 1.5; // a screen and a half: something to scroll back to
  }, null, { timeout: 20000 });
  await panel.$eval('#transcript', (t) => { t.scrollTop = 0; });
  await panel.waitForSelector('#new-activity:not([hidden])', { timeout: 10000 });
  await shot(page, 'firstrun-new-activity');
  await panel.click('#new-activity');
  await panel.waitForSelector('#new-activity', { state: 'hidden', timeout: 5000 });
  await panel.waitForSelector('.assistant:has-text("LONG-END")', { timeout: 30000 });
  const atBottom = await panel.$eval('#transcript', (t) => t.scrollHeight - t.scrollTop - t.clientHeight < 60);
  if (!atBottom) throw new Error('after "New activity" the transcript did not follow the answer');
  log(`one status bar item while running (${items[0].trim()}); scrolled up: "↓ New activity", a click went back down`);

  // 3. The panel closed (the side bar hidden), a message from the command palette.
  await page.click('.monaco-editor .view-lines');
  await page.keyboard.press('Control+B');
  await page.waitForSelector('.part.sidebar', { state: 'hidden', timeout: 10000 });
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type('Agent: Send Message');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Send Message")', { timeout: 10000 });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget:has-text("Message to the agent")', { timeout: 10000 });
  await page.keyboard.type('rename it');
  await page.keyboard.press('Enter');
  const toast = await page.waitForSelector('.notification-toast:has-text("Agent: done")', { timeout: 20000 });
  const said = (await toast.$eval('.notification-list-item-message', (n) => n.textContent)) ?? '';
  if (!said.includes('Renamed old_name to new_name in hello.py.') || /[*`\[\]]/.test(said)) {
    throw new Error(`the "done" notification shows ${JSON.stringify(said)}`);
  }
  await shot(page, 'firstrun-done-toast');
  log(`the panel closed: the turn's end is a notification without markdown ("${said}")`);
}
