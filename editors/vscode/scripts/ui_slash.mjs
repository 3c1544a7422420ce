// The panel input's "/" menu in the UI run (scripts/vscode_run.mjs, mode
// "ui"): a real MCP server (stdio, built with the official `mcp` SDK, set in
// the workspace's agentLsp.mcpServers) offers the prompt summarise(path,
// focus?). Typing "/" lists the panel's commands and the prompt, typing
// filters, ↑/↓ move, Esc closes; Enter on the prompt asks for its arguments
// in input boxes and its message is sent; Tab writes "/notes:summarise " to
// type the arguments inline; a panel command (/compact) runs from it too.

import fs from 'node:fs';
import path from 'node:path';

const SERVER = `from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.prompt(description="Summarise a file for a reader")
def summarise(path: str, focus: str = "") -> str:
    return f"PROMPT-UI summarise {path}" + (f", looking at {focus}." if focus else ".")


server.run()
`;

/** The workspace settings that start the prompt server (its script written into `work`). */
export function slashSettings(work, python) {
  const script = path.join(work, 'notes_mcp_server.py');
  fs.writeFileSync(script, SERVER);
  return { 'agentLsp.mcpServers': { notes: { command: python, args: [script] } } };
}

export const slashScript = [
  { when: 'PROMPT-UI summarise hello.py.', text: 'Summarised as asked.' },
  { when: 'looking at the greeting', text: 'Summarised, looking at the greeting.' },
];

const menuNames = (panel) => panel.$$eval('#slash-menu .slash-item .slash-name', (nodes) => nodes.map((n) => n.textContent));
const selected = (panel) => panel.$eval('#slash-menu .slash-item.selected .slash-name', (n) => n.textContent);

async function expectMenu(panel, names) {
  await panel
    .waitForFunction((want) => JSON.stringify([...document.querySelectorAll('#slash-menu .slash-item .slash-name')].map((n) => n.textContent)) === want, JSON.stringify(names), { timeout: 10000 })
    .catch(async () => {
      throw new Error(`the menu shows ${JSON.stringify(await menuNames(panel))}, expected ${JSON.stringify(names)}`);
    });
}

export async function slashMenu(page, { panel, log, shot }) {
  await panel.click('#input');
  await page.keyboard.type('/');
  // The first listing waits for the MCP server to start.
  await panel.waitForSelector('#slash-menu .slash-item:has(.slash-name:text-is("/notes:summarise")):has-text("‹path› [focus]")', { timeout: 30000 });
  const all = await menuNames(panel);
  for (const name of ['/new', '/compact', '/model']) {
    if (!all.includes(name)) throw new Error(`the menu has no ${name}: ${JSON.stringify(all)}`);
  }
  await shot(page, 'slash-menu');
  await page.keyboard.type('sum');
  await expectMenu(panel, ['/notes:summarise', '/resume']);
  await page.keyboard.press('ArrowDown');
  if ((await selected(panel)) !== '/resume') throw new Error(`↓ highlighted ${await selected(panel)}`);
  await page.keyboard.press('ArrowDown');
  if ((await selected(panel)) !== '/notes:summarise') throw new Error(`↓ at the end did not wrap: ${await selected(panel)}`);
  await page.keyboard.press('ArrowUp');
  if ((await selected(panel)) !== '/resume') throw new Error(`↑ highlighted ${await selected(panel)}`);
  await page.keyboard.press('Escape');
  await panel.waitForSelector('#slash-menu', { state: 'hidden', timeout: 5000 });
  if ((await panel.inputValue('#input')) !== '/sum') throw new Error('Esc changed the input');
  await page.keyboard.type('m');
  await expectMenu(panel, ['/notes:summarise']);
  log('"/" menu: the panel\'s commands and the MCP prompt, filtered as typed; ↑/↓ move (wrapping), Esc closes');

  // Enter runs the prompt: its arguments are asked in input boxes.
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget:has-text("notes:summarise: path")', { timeout: 10000 });
  await page.keyboard.type('hello.py');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget:has-text("notes:summarise: focus (optional)")', { timeout: 10000 });
  await page.keyboard.press('Enter');
  await panel.waitForSelector('.user .user-text:text-is("PROMPT-UI summarise hello.py.")', { timeout: 20000 });
  await panel.waitForSelector('.assistant:has-text("Summarised as asked.")', { timeout: 20000 });
  if ((await panel.inputValue('#input')) !== '') throw new Error('the input kept the command');
  log('Enter on /notes:summarise asked for path (and the optional focus), and its message was sent');

  // Tab writes the name into the input; the arguments typed after it need no questions.
  await panel.click('#input');
  await page.keyboard.type('/notes:s');
  await page.keyboard.press('Tab');
  if ((await panel.inputValue('#input')) !== '/notes:summarise ') throw new Error(`Tab wrote ${JSON.stringify(await panel.inputValue('#input'))}`);
  await panel.waitForSelector('#slash-menu', { state: 'hidden', timeout: 5000 });
  await page.keyboard.type('path=hello.py focus="the greeting"');
  await page.keyboard.press('Enter');
  await panel.waitForSelector('.user .user-text:text-is("PROMPT-UI summarise hello.py, looking at the greeting.")', { timeout: 20000 });
  await panel.waitForSelector('.assistant:has-text("Summarised, looking at the greeting.")', { timeout: 20000 });
  log('Tab completed /notes:summarise; its arguments typed inline ran it without questions');

  // A panel command from the menu.
  const compactions = (await panel.$$('.compaction.done')).length;
  await page.keyboard.type('/comp');
  await expectMenu(panel, ['/compact']);
  await page.keyboard.press('Enter');
  await panel.waitForFunction((n) => document.querySelectorAll('.compaction.done').length > n, compactions, { timeout: 20000 });
  log('/compact from the menu compacted the conversation');
}
