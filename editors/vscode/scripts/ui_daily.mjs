// The UI checks of everyday use, driven by scripts/vscode_run.mjs (mode
// "daily"): the installed .vsix in code-server, the real server, the scripted
// model.
//
// 1. Opening the panel (Ctrl+Alt+I, or the command) puts the caret in the input.
// 2. A permission card that appears while the user types takes nothing: every
//    key lands in the input, nothing runs; it is an alertdialog in a live
//    region, reached with Alt+P; a click right as it appears answers nothing;
//    for an always-confirmed command Alt+P lands on Deny.
// 3. The transcript stays at the bottom while the card comes and goes.
// 4. A failed edit card says its error once; a long URL stays inside the error box.
// 5. An image pasted into the input, sent and shown (ui_images.mjs).
// 6. A server that dies: the header says "no server", its message's default button is Restart.

import fs from 'node:fs';
import path from 'node:path';
import { images, imagesScript } from './ui_images.mjs';

const paragraphs = (n, tag) => Array.from({ length: n }, (_, i) => `${tag} paragraph ${i + 1} of a long answer.`).join('\n\n');
const FILL = `${paragraphs(40, 'Fill')}\n\nFILL-END`;
const AFTER = `${paragraphs(40, 'After')}\n\nTOUCH-END`;

export const dailyScript = [
  { when: 'FILL-D', text: FILL },
  { when: 'TOUCH-D', text: 'Running.', tools: [{ name: 'run_command', arguments: { command: 'touch created-by-agent.txt' } }] },
  { when: 'TOUCH-D', text: AFTER, chunkDelayMs: 1 },
  { when: 'RM-D', text: 'Cleaning.', tools: [{ name: 'run_command', arguments: { command: 'rm -rf build-d' } }] },
  { when: 'RM-D', text: 'Not cleaning.' },
  { when: 'EDIT-D', text: 'Editing.', tools: [{ name: 'edit_file', arguments: { path: 'hello.py', edits: [{ oldText: 'no such text', newText: 'x' }] } }] },
  { when: 'EDIT-D', text: 'The edit failed.' },
  ...imagesScript,
  { when: 'URL-D', fail: 'BAD_REQUEST', message: `Rejected by https://gateway.example.com/${'very-long-path-segment/'.repeat(12)}v1/chat/completions?api-version=2024-10-01` },
];

const focusedId = (panel) => panel.evaluate(() => document.activeElement?.id ?? '');

export async function daily(page, { ws, sessionsDir, log, shot, panelFrame, runCommand, openHelloPy, killAgentServer }) {
  await openHelloPy(page);

  // 1. Ctrl+Alt+I from the editor (the panel not drawn yet), then the command (drawn).
  await page.click('.monaco-editor .view-lines');
  await page.keyboard.press('Control+Alt+I');
  const panel = await panelFrame(page);
  await panel.waitForFunction(() => document.activeElement?.id === 'input', null, { timeout: 10000 });
  await page.keyboard.type('abc');
  await page.click('.monaco-editor .view-lines');
  await runCommand(page, 'Agent: Open Agent Panel');
  await panel.waitForFunction(() => document.activeElement?.id === 'input', null, { timeout: 10000 });
  await page.keyboard.type('def');
  const opened = await panel.inputValue('#input');
  if (opened !== 'abcdef') throw new Error(`keys typed right after opening the panel: the input holds ${JSON.stringify(opened)}`);
  if (fs.readFileSync(path.join(ws, 'hello.py'), 'utf8') !== 'print("hello world")\n') throw new Error('the keys went to the editor');
  log('Ctrl+Alt+I and "Agent: Open Agent Panel" put the caret in the input');

  // Enough transcript to scroll.
  await panel.fill('#input', 'FILL-D say a lot');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("FILL-END")', { timeout: 20000 });

  // 2. The card appears while the user types the next message.
  await panel.fill('#input', 'TOUCH-D run it');
  await panel.press('#input', 'Enter');
  const sentence = 'and then please also look at the tests in the other folder ';
  let typed = '';
  let after = -1; // keys typed since the card appeared
  for (let i = 0; after < 20; i++) {
    if (i > 4000) throw new Error('the permission card did not appear');
    const key = sentence[i % sentence.length];
    await page.keyboard.type(key);
    typed += key;
    if (after >= 0) after++;
    else if (await panel.$('#permission:not([hidden])')) after = 0;
  }
  const kept = await panel.inputValue('#input');
  if (kept !== typed) throw new Error(`typing while the card appeared: the input holds ${JSON.stringify(kept)}, typed ${JSON.stringify(typed)}`);
  if ((await focusedId(panel)) !== 'input') throw new Error('the card took the focus from the input');
  const role = await panel.$eval('#permission', (s) => [s.getAttribute('role'), s.getAttribute('aria-live')].join(' '));
  if (role !== 'alertdialog assertive') throw new Error(`the card is announced as ${role}`);
  if (fs.existsSync(path.join(ws, 'created-by-agent.txt'))) throw new Error('a key typed into the input ran the command');
  await panel.waitForSelector('#permission[data-armed]', { state: 'attached', timeout: 5000 });
  await page.keyboard.press('Alt+P');
  const landed = await panel.evaluate(() => document.activeElement?.textContent);
  if (landed !== 'Allow once') throw new Error(`Alt+P landed on ${JSON.stringify(landed)}`);
  await page.keyboard.press('Escape');
  await panel.waitForSelector('.tool.failed:has-text("touch created-by-agent.txt")', { timeout: 20000 });
  log(`${after} keys typed after the card appeared all stayed in the input; nothing ran; Alt+P reached the card, Esc denied`);

  // 3. Still at the bottom after the card came and went, and the long answer streamed.
  await panel.waitForSelector('.assistant:has-text("TOUCH-END")', { timeout: 30000 });
  await panel.waitForSelector('#working[hidden]', { state: 'attached', timeout: 10000 });
  const pin = await panel.$eval('#transcript', (t) => ({
    gap: Math.round(t.scrollHeight - t.scrollTop - t.clientHeight),
    newActivity: !document.querySelector('#new-activity').hidden,
  }));
  if (pin.gap > 60 || pin.newActivity) throw new Error(`the transcript stopped following after the card: ${JSON.stringify(pin)}`);
  if (fs.existsSync(path.join(ws, 'created-by-agent.txt'))) throw new Error('the denied command ran');
  log('the transcript stayed at the bottom across the card, no "New activity"');

  // 4. An always-confirmed command: a click as the card appears answers nothing; Alt+P lands on Deny.
  await panel.fill('#input', '');
  await panel.evaluate(() => {
    const section = document.querySelector('#permission');
    new MutationObserver((_, observer) => {
      const allow = section.querySelector('button[data-answer="once"]');
      if (allow) {
        observer.disconnect();
        allow.click(); // a stray click (or Enter) the moment it is drawn
      }
    }).observe(section, { childList: true });
  });
  await panel.fill('#input', 'RM-D clean the build');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('#permission[data-armed]:has-text("rm -rf build-d")', { state: 'attached', timeout: 20000 });
  await page.keyboard.press('Alt+P');
  const safe = await panel.evaluate(() => document.activeElement?.textContent);
  if (safe !== 'Deny') throw new Error(`Alt+P on an always-confirmed command landed on ${JSON.stringify(safe)}`);
  await page.keyboard.press('Enter');
  await panel.waitForSelector('.tool.failed:has-text("rm -rf build-d")', { timeout: 20000 });
  await panel.waitForSelector('.assistant:has-text("Not cleaning.")', { timeout: 20000 });
  log('always-confirmed: the click as it appeared was ignored, Alt+P landed on Deny, Enter denied');

  // 5. A failed edit says why once; a long URL in an error wraps inside its box.
  await panel.fill('#input', 'EDIT-D change it');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("The edit failed.")', { timeout: 20000 });
  const card = await panel.$eval('.tool.failed:has-text("edit_file")', (n) => ({ text: n.innerText, why: n.querySelector('.tool-error')?.textContent ?? '' }));
  const times = card.why ? card.text.split(card.why).length - 1 : 0;
  if (!card.why || times !== 1) throw new Error(`the failed edit's error is shown ${times} times: ${JSON.stringify(card.text)}`);
  await panel.fill('#input', 'URL-D fail with a long address');
  await panel.press('#input', 'Enter');
  const box = await panel.waitForSelector('.item.error:has-text("gateway.example.com")', { timeout: 20000 });
  const overflow = await box.evaluate((n) => n.scrollWidth - n.clientWidth);
  if (overflow > 0) throw new Error(`a long URL overflows the error box by ${overflow} px`);
  log('a failed edit says why once; a long URL wraps inside the error box');

  // 6. An image pasted, sent and shown.
  await images(page, { panel, sessionsDir, log, shot });

  // 7. The server dies: the header says so (not "idle"), and the message's first button restarts it.
  const pid = killAgentServer();
  const toast = await page.waitForSelector('.notification-toast:has-text("stopped unexpectedly")', { timeout: 20000 });
  await panel.waitForSelector('#status:text-is("no server")', { timeout: 10000 });
  const buttons = await toast.$$eval('.monaco-button', (nodes) => nodes.map((n) => `${n.textContent}${n.classList.contains('secondary') ? '' : ' (primary)'}`));
  if (!buttons[0]?.startsWith('Restart') || !buttons[0].endsWith('(primary)')) throw new Error(`the crash message's buttons: ${JSON.stringify(buttons)}`);
  await toast.$eval('.monaco-button', (b) => b.click());
  await panel.waitForSelector('#status:text-is("idle")', { timeout: 30000 });
  await panel.waitForSelector('#banner[hidden]', { state: 'attached', timeout: 10000 });
  log(`the server (pid ${pid}) killed: the header said "no server", the message's default button "Restart" brought it back`);
}
