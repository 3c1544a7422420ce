// Runs the extension in real VS Code (code-server 4.100.3) driven by Debian's
// Chromium through playwright-core, against the real agent_lsp server with
// the scripted model.
//
//   node scripts/vscode_run.mjs exttest   the suite in exttest/ inside the extension host
//                                          (EXT_BENCH=1: the language benchmark, exttest/languageBench.ts, instead)
//   node scripts/vscode_run.mjs ui        the installed agent-lsp.vsix (npm run package first) driven
//                                          through the UI like a user, then the panel's buttons
//                                          clicked (ui_clicks.mjs) and its "/" menu (ui_slash.mjs); screenshots
//   node scripts/vscode_run.mjs firstrun  the installed .vsix in a workspace with no model configured,
//                                          then code blocks and the transcript's other details (ui_firstrun.mjs)
//   node scripts/vscode_run.mjs daily     the installed .vsix: opening the panel, a permission card appearing
//                                          while the user types, the transcript following, an image pasted (ui_daily.mjs)
//   node scripts/vscode_run.mjs bench     the installed .vsix: a 5,000-line answer streamed into the panel
//                                          while keys are typed; prints frames and input latency (bench/panel_stream.mjs)
//
// Env: CODE_SERVER (default .work/code-server), CHROMIUM (default /usr/bin/chromium),
// AGENT_LSP_PYTHON (default <repo>/.venv/bin/python), ARTIFACTS (default .work/artifacts),
// VSCODE_THEME (e.g. "Default Dark Modern", to look at the panel in another theme).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { clicks, clicksScript, refusedKey } from './ui_clicks.mjs';
import { slashMenu, slashScript, slashSettings } from './ui_slash.mjs';
import { firstRun } from './ui_firstrun.mjs';
import { daily, dailyScript } from './ui_daily.mjs';
import { benchScript, streamBench } from '../bench/panel_stream.mjs';

const mode = process.argv[2] ?? 'exttest';
const extDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(extDir, '..', '..');
const codeServer = process.env.CODE_SERVER ?? path.join(extDir, '.work', 'code-server');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const python = process.env.AGENT_LSP_PYTHON ?? (fs.existsSync(path.join(repo, '.venv/bin/python')) ? path.join(repo, '.venv/bin/python') : 'python3');
const artifacts = path.resolve(process.env.ARTIFACTS ?? path.join(extDir, '.work', 'artifacts'));
const work = path.join(extDir, '.work', `run-${mode}`);
const started = Date.now();
const log = (msg) => console.log(`${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s ${msg}`);

const HELLO = 'Hello from the **scripted** model.';
const EDITED = 'I changed hello.py.';
const SLOW = 'Working on it, slowly, so that there is time to queue, remove and steer messages.';
// 200 chunks/s for about 4 s: the panel must keep up (one chunk per character).
const LONG = Array.from({ length: 16 }, (_, i) => `Line ${i + 1} of a **long** answer with \`code\` in it.`).join('\n\n') + '\n\nEND-OF-STREAM';
const editReply = {
  text: 'Editing.',
  tools: [{ name: 'edit_file', arguments: { path: 'hello.py', edits: [{ oldText: 'world', newText: 'agent' }] } }],
};
// The language benchmark's edits of bench/a.ts (exttest/languageBench.ts): break its two callers, fix them, change a comment.
const benchEdits = (when) => {
  const narrow = 'export function total(values: number[]): number {';
  const wide = 'export function total(values: number[], start: number): number {';
  const comments = ['// the sum', '// the total'];
  const steps = [];
  for (let i = 0; i < 6; i++) {
    for (const [oldText, newText] of [[narrow, wide], [wide, narrow], [comments[i % 2], comments[(i + 1) % 2]]]) {
      steps.push({ when, tools: [{ name: 'edit_file', arguments: { path: 'bench/a.ts', edits: [{ oldText, newText }] } }] });
    }
  }
  return [...steps, { when, text: 'Benchmarked.' }];
};
const scripts = {
  exttest: [
    { text: HELLO },
    editReply,
    { text: EDITED },
    { text: 'Running.', tools: [{ name: 'run_command', arguments: { command: 'echo from-agent' } }] },
    { text: 'Ran it.' },
    { hang: 'partial' },
    { text: 'working slowly on it, step by step', chunkDelayMs: 60 },
    { text: 'steered' },
    { text: 'queued ran' },
    { fail: 'AUTH', message: 'Set OPENAI_API_KEY' },
    // Taken only by the prompts (and the sub-agent's task) they name, whenever those come.
    { when: 'PLAN-EXT', tools: [
      { name: 'edit_file', arguments: { path: 'hello.py', edits: [{ oldText: 'print', newText: 'planned' }] } },
      { name: 'todo_write', arguments: { items: [{ content: 'look', status: 'completed' }, { content: 'change', status: 'pending' }] } },
    ] },
    { when: 'PLAN-EXT', text: 'Planned.' },
    { when: 'DELEGATE-EXT', tools: [{ name: 'subagent', arguments: { description: 'read hello.py', task: 'SUB-EXT read hello.py' } }] },
    { when: 'SUB-EXT', text: 'It prints a greeting.' },
    { when: 'DELEGATE-EXT', text: 'Delegated.' },
    { when: 'MCP-EXT', tools: [{ name: 'mcp__time__get_current_time', arguments: { timezone: 'UTC' } }] },
    { when: 'MCP-EXT', text: 'It is time.' },
    { when: 'SKILL-EXT', text: 'Greeted.' },
    // The language tool, answered by VS Code's own TypeScript features.
    { when: 'RENAME-TS', tools: [{ name: 'language', arguments: { operation: 'rename', path: 'tsq/a.ts', line: 1, symbol: 'greet', newName: 'welcome' } }] },
    { when: 'RENAME-TS', text: 'Renamed.' },
    { when: 'BREAK-TS', tools: [{ name: 'edit_file', arguments: { path: 'tsq/b.ts', edits: [{ oldText: "greet('b')", newText: 'greet(42)' }] } }] },
    { when: 'BREAK-TS', text: 'Broke it.' },
    { when: 'CLEAN-TS', tools: [{ name: 'edit_file', arguments: { path: 'tsq/c.ts', edits: [{ oldText: "greet('c')", newText: "greet('see')" }] } }] },
    { when: 'CLEAN-TS', text: 'Renamed the greeting.' },
    { when: 'UNOPENED-TS', tools: [{ name: 'edit_file', arguments: { path: 'tsq/d.ts', edits: [{ oldText: '= 2', newText: "= 'two'" }] } }] },
    { when: 'UNOPENED-TS', text: 'Changed d.ts.' },
    { when: 'CALLER-TS', tools: [{ name: 'edit_file', arguments: { path: 'tsq/a.ts', edits: [{ oldText: 'greet(name: string)', newText: 'greet(name: string, times: number)' }] } }] },
    { when: 'CALLER-TS', text: 'Gave greet a second parameter.' },
    ...benchEdits('BENCH-TS'),
    ...benchEdits('BENCH-OFF'),
  ],
  ui: [
    { reasoning: 'Let me look at the file first.', text: HELLO },
    editReply,
    { text: EDITED },
    { text: 'Running.', tools: [{ name: 'run_command', arguments: { command: 'echo ui-allowed' } }] },
    { text: 'Ran it.' },
    { text: 'Trying again.', tools: [{ name: 'run_command', arguments: { command: 'rm -rf ui-denied' } }] },
    { text: 'Understood: not running it.' },
    { hang: 'partial' },
    { hang: 'again' },
    { text: SLOW, chunkDelayMs: 40 },
    { text: 'Steered: ok.' },
    { text: LONG, chunkDelayMs: 5 },
    { text: 'About the selection.' },
    { text: 'SUMMARY: a greeting, an edit (reverted), two commands (one denied), a long answer.' },
    // Plan mode and a sub-agent: replies taken only by the prompts (and the sub-agent's task) they name.
    { when: 'PLAN-UI', tools: [
      { name: 'edit_file', arguments: { path: 'hello.py', edits: [{ oldText: 'world', newText: 'plan' }] } },
      { name: 'todo_write', arguments: { items: [{ content: 'read hello.py', status: 'completed' }, { content: 'greet the planner', status: 'pending' }] } },
    ] },
    { when: 'PLAN-UI', text: 'Planned.' },
    { when: 'DELEGATE-UI', tools: [{ name: 'subagent', arguments: { description: 'count the lines', task: 'SUB-UI count the lines of hello.py' } }] },
    { when: 'SUB-UI', text: 'hello.py has one line.' },
    { when: 'DELEGATE-UI', text: 'Delegated.' },
    ...clicksScript,
    ...slashScript,
  ],
  daily: dailyScript,
  bench: benchScript,
};

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function prepare() {
  fs.rmSync(work, { recursive: true, force: true });
  const ws = path.join(work, 'ws');
  fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'hello.py'), 'print("hello world")\n');
  fs.writeFileSync(
    path.join(ws, '.vscode', 'settings.json'),
    JSON.stringify(
      {
        ...(scripts[mode] ? { 'agentLsp.model': { provider: 'scripted', script: scripts[mode] } } : {}),
        ...(mode === 'ui' ? slashSettings(work, python) : {}),
        ...(mode === 'firstrun' ? { 'agentLsp.permissions': { rules: [{ tool: 'run_command', action: 'allow' }] } } : {}),
        'agentLsp.sessionsDir': path.join(work, 'sessions'),
        'agentLsp.attachActiveEditor': false,
        // Desktop VS Code's default. code-server's browser build saves a second
        // after each change, which would write the review-mode edits the tests
        // expect to wait unsaved.
        'files.autoSave': 'off',
      },
      null,
      2,
    ),
  );
  const data = path.join(work, 'data');
  fs.mkdirSync(path.join(data, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(data, 'User', 'settings.json'),
    JSON.stringify({ ...(process.env.VSCODE_THEME ? { 'workbench.colorTheme': process.env.VSCODE_THEME } : {}), 'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false, 'telemetry.telemetryLevel': 'off', 'workbench.tips.enabled': false, 'git.openRepositoryInParentFolders': 'never' }),
  );
  // The server is the user's setting (VS Code does not read agentLsp.server.* from a
  // folder). code-server keeps it in its machine's user settings, where
  // ConfigurationTarget.Global writes a "machine" setting.
  fs.mkdirSync(path.join(data, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(data, 'Machine', 'settings.json'), JSON.stringify({ 'agentLsp.server.pythonPath': python }, null, 2));
  fs.mkdirSync(artifacts, { recursive: true });
  return { ws, data };
}

async function waitHealthy(port, timeoutMs = 30000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('code-server did not become healthy');
}

/** Install the packaged extension the way a user does (code-server --install-extension). */
function installVsix(data) {
  const vsix = path.join(extDir, 'agent-lsp.vsix');
  if (!fs.existsSync(vsix)) throw new Error(`${vsix} is missing: run npm run package first`);
  const out = spawnSync(
    process.execPath,
    [path.join(codeServer, 'out/node/entry.js'), '--extensions-dir', path.join(work, 'extensions'), '--user-data-dir', data, '--install-extension', vsix],
    { encoding: 'utf8' },
  );
  if (out.status !== 0 || !/successfully installed/.test(out.stdout)) throw new Error(`installing the .vsix failed:\n${out.stdout}\n${out.stderr}`);
  log(`installed ${path.basename(vsix)} (${(fs.statSync(vsix).size / 1024).toFixed(0)} KB)`);
}

async function main() {
  const { ws, data } = prepare();
  if (mode !== 'exttest') installVsix(data);
  // A stand-in for the Python extension (the real one is not installable here), whose
  // interpreter the server may be found through; code-server loads one development extension only.
  if (mode === 'exttest') fs.cpSync(path.join(extDir, 'exttest', 'python-extension'), path.join(work, 'extensions', 'ms-python.python-0.0.1'), { recursive: true });
  const port = await freePort();
  const resultFile = path.join(work, 'result.json');
  const serverLog = fs.openSync(path.join(artifacts, `code-server-${mode}.log`), 'w');
  const env = {
    ...process.env,
    EXTENSIONS_GALLERY: '{"serviceUrl":"http://127.0.0.1:9/gallery"}',
    XDG_CONFIG_HOME: path.join(work, 'xdg-config'),
    XDG_DATA_HOME: path.join(work, 'xdg-data'),
    XDG_CACHE_HOME: path.join(work, 'xdg-cache'),
    EXT_TEST_RESULT: resultFile,
  };
  if (mode === 'firstrun') {
    // No model configured anywhere: no key or endpoint in the environment, no user config file.
    for (const name of Object.keys(env)) {
      if (/_API_KEY$|_BASE_URL$|^AGENT_LSP_(PROVIDER|MODEL|CONFIG)$/.test(name)) delete env[name];
    }
  }
  const cs = spawn(
    process.execPath,
    [
      path.join(codeServer, 'out/node/entry.js'),
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--extensions-dir', path.join(work, 'extensions'),
      '--user-data-dir', data,
      ws,
    ],
    { env, detached: true, stdio: ['ignore', serverLog, serverLog] },
  );
  const killServer = () => {
    try {
      process.kill(-cs.pid, 'SIGTERM'); // the whole group: extension host and our server too
    } catch {}
  };
  process.on('exit', killServer);
  let browser;
  let page;
  try {
    await waitHealthy(port);
    log(`code-server up on ${port}`);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
    // exttest loads the extension from its sources; ui from the installed .vsix
    const payload = mode === 'exttest' ? [['extensionDevelopmentPath', remote(extDir)], ['extensionTestsPath', remote(path.join(extDir, 'out-exttest', 'exttest', 'suite.js'))]] : [];
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    log('workbench loaded');
    if (mode === 'exttest') {
      await waitForFile(resultFile, 180000);
      const result = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
      for (const o of result.outcomes) {
        log(`${o.ok ? 'ok  ' : 'FAIL'} ${o.name} (${o.ms} ms)${o.ok ? '' : `\n${o.error}`}`);
        for (const figure of o.figures ?? []) log(`  ${figure}`);
      }
      // (the extension host has exited with the suite: its webviews are gone)
      await page.screenshot({ path: path.join(artifacts, 'vscode-exttest.png') });
      if (!result.ok) throw new Error('extension-host tests failed');
      log(`PASS ${result.outcomes.length} extension-host tests`);
    } else if (mode === 'firstrun') {
      await firstRun(page, { ws, log, panelFrame, shot, openHelloPy });
      log('PASS first run');
    } else if (mode === 'bench') {
      await streamBench(page, { log, panelFrame });
    } else if (mode === 'daily') {
      await daily(page, { ws, sessionsDir: path.join(work, 'sessions'), log, shot, panelFrame, runCommand, openHelloPy, killAgentServer: () => killAgentServer(cs.pid) });
      log('PASS daily use');
    } else {
      await uiSmoke(page, { ws, data });
      log('PASS ui smoke');
    }
  } catch (error) {
    if (page) await page.screenshot({ path: path.join(artifacts, `vscode-${mode}-failure.png`) }).catch(() => {});
    console.error(error);
    process.exitCode = 1;
  } finally {
    await browser?.close().catch(() => {});
    killServer();
  }
}

/** Kill this run's agent server (a descendant of its code-server, found in
 * /proc), as a crash would: SIGKILL. The pid it killed. */
function killAgentServer(root) {
  const parent = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const isOurs = (pid) => {
    for (let p = pid; p > 1; p = parent.get(p) ?? 0) if (p === root) return true;
    return false;
  };
  for (const pid of parent.keys()) {
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {}
    if (/-m agent_lsp\b/.test(cmd) && isOurs(pid)) {
      process.kill(pid, 'SIGKILL');
      return pid;
    }
  }
  throw new Error('no agent server under this code-server');
}

async function waitForFile(file, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (fs.existsSync(file)) {
      await new Promise((r) => setTimeout(r, 100));
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no test result after ${timeoutMs / 1000} s (see code-server-${mode}.log)`);
}

async function panelFrame(page, timeoutMs = 30000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    for (const frame of page.frames()) {
      if (await frame.$('#transcript').catch(() => null)) return frame;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the agent panel did not appear');
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type(title);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title.replace(/^>?\s*/, '')}")`, { timeout: 10000 });
  await page.keyboard.press('Enter');
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `vscode-ui-${name}.png`) });
}

/** Run an item of the panel's "…" menu (a menu ignores a click right as it opens:
 * point at the item and press Enter, as from the keyboard). */
async function panelMenu(page, label) {
  await page.click('.part.sidebar .title-actions .action-label.codicon-toolbar-more');
  await page.hover(`.monaco-menu .action-label:has-text("${label}")`);
  await page.keyboard.press('Enter');
}

/** The permission card in the panel: its text, once it is shown. */
async function permissionCard(panel) {
  // (a new card ignores keys and clicks for a moment: data-armed says it listens)
  const card = await panel.waitForSelector('#permission[data-armed]:not([hidden])', { timeout: 15000 });
  return (await card.innerText()).replace(/\s+/g, ' ');
}

/** Open hello.py with Ctrl+P (so edits land in a visible buffer) and wait until the
 * agent's status bar item has left "starting"; that item (it opens the panel). */
async function openHelloPy(page) {
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type('hello.py');
  // The file search waits for the extension host, slow to start on a busy machine.
  await page.waitForSelector('.quick-input-list .monaco-list-row', { timeout: 30000 });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.view-lines:has-text("hello world")', { timeout: 15000 });
  return page.waitForSelector('.statusbar-item:has-text("Agent"):not(:has-text("starting"))', { timeout: 30000 });
}

async function uiSmoke(page, workspace) {
  // The status bar item shows the state and opens the panel.
  const status = await openHelloPy(page);
  log('hello.py open');
  await status.click();
  const panel = await panelFrame(page);
  await panel.waitForSelector('#banner[hidden]', { state: 'attached', timeout: 30000 });
  await panel.waitForSelector('#empty:not([hidden])');
  await shot(page, 'empty');
  log('panel opened from the status bar, server running');

  await panel.click('#input');
  await page.keyboard.type('first line');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('second line');
  if ((await panel.inputValue('#input')) !== 'first line\nsecond line') throw new Error('Shift+Enter did not add a line');
  if ((await panel.$$('#transcript .item')).length) throw new Error('Shift+Enter sent the message');
  log('Shift+Enter added a line, sent nothing');
  await panel.fill('#input', 'hi there, see ');
  await panel.click('#mention'); // "@ file": pick a file to mention
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("hello.py")', { timeout: 10000 });
  await page.keyboard.type('hello.py');
  await page.keyboard.press('Enter');
  await panel.waitForFunction(() => document.querySelector('#input').value === 'hi there, see @hello.py ', null, { timeout: 10000 });
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("Hello from the scripted model.")', { timeout: 20000 });
  await panel.waitForSelector('.assistant strong:has-text("scripted")');
  await panel.waitForSelector('.user .chip:has-text("hello.py")');
  const reasoning = await panel.waitForSelector('.reasoning details');
  if (await reasoning.evaluate((d) => d.open)) throw new Error('reasoning is shown expanded');
  await panel.waitForSelector('#meter:not([hidden]) #meter-text:has-text("of 128k")');
  log('streamed answer (markdown), @hello.py attached, reasoning collapsed, context meter shown');

  await panel.fill('#input', 'please change hello.py');
  await panel.press('#input', 'Enter');
  await page.waitForSelector('.view-lines:has-text("hello agent")', { timeout: 20000 });
  await panel.waitForSelector(`.assistant:has-text("${EDITED}")`, { timeout: 20000 });
  await panel.waitForSelector('.tool.done:has-text("edit_file")');
  await shot(page, 'edit');
  await panel.click('button:has-text("Revert this turn")');
  await page.waitForSelector('.view-lines:has-text("hello world")', { timeout: 20000 });
  await panel.waitForSelector('.revert-note:has-text("reverted hello.py")', { timeout: 10000 });
  log('edit visible in the editor; "Revert this turn" undid it and says so');

  await panel.fill('#input', 'run it');
  await panel.press('#input', 'Enter');
  let question = await permissionCard(panel);
  if (!question.includes('echo ui-allowed')) throw new Error(`the permission card does not name the command: ${question}`);
  for (const label of ['Allow once', 'Allow for this session', 'Always allow', 'Deny']) {
    if (!question.includes(label)) throw new Error(`the permission card has no "${label}": ${question}`);
  }
  if ((await page.$$('.monaco-dialog-box')).length) throw new Error('a modal dialog asks as well');
  await panel.waitForSelector('#status.waiting:has-text("waiting for you")');
  await page.waitForSelector('.statusbar-item:has-text("waiting for you")', { timeout: 10000 });
  await shot(page, 'permission');
  // Keyboard: the answers are buttons; Enter on the focused one answers.
  await panel.focus('#permission button:has-text("Allow for this session")');
  await page.keyboard.press('Enter');
  await panel.waitForSelector('#permission[hidden]', { state: 'attached', timeout: 10000 });
  await panel.waitForSelector('.tool.done:has-text("echo ui-allowed")', { timeout: 20000 });
  await panel.waitForSelector('.assistant:has-text("Ran it.")', { timeout: 20000 });
  const allowed = await panel.$eval('.tool.done:has-text("echo ui-allowed")', (n) => n.textContent);
  if (!allowed.includes('ui-allowed\n')) {
    await panel.click('.tool.done:has-text("echo ui-allowed") summary');
  }
  await panel.waitForSelector('.tool.done:has-text("echo ui-allowed") .tool-output:has-text("ui-allowed")', { state: 'attached' });
  log(`permission card in the panel named the command, header and status bar said "waiting for you"; Enter on "Allow for this session" ran it`);

  // The rule that answer remembered, from the panel's "…" menu: listed with its scope, picked to revoke it.
  await panelMenu(page, 'Manage Permissions');
  const rule = await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("allow run_command: $ echo ui-allowed")', { timeout: 10000 });
  const ruleText = (await rule.innerText()).replace(/\s+/g, ' ');
  if (!ruleText.includes('this session')) throw new Error(`the rule is not listed as this session's: ${ruleText}`);
  await shot(page, 'permission-rules');
  await rule.click();
  await page.waitForSelector('.notification-toast:has-text("revoked")', { timeout: 10000 });
  log(`the panel's menu "Manage Permissions…" listed the remembered rule "allow run_command: $ echo ui-allowed" (this session) and revoked it`);
  await panelMenu(page, 'Revert Last Turn'); // the edit of turn 2 is reverted already
  await page.waitForSelector('.notification-toast:has-text("no turn with edits left to revert")', { timeout: 10000 });
  log(`the panel's menu "Revert Last Turn": no turn with edits left, and it says so`);

  await panel.fill('#input', 'run it again');
  await panel.press('#input', 'Enter');
  question = await permissionCard(panel);
  if (!question.includes('rm -rf ui-denied')) throw new Error(`the permission card does not name the command: ${question}`);
  // The server always confirms a recursive delete: no answer it would not honour, and the reason.
  for (const label of ['Allow for this session', 'Always allow']) {
    if (question.includes(label)) throw new Error(`the card offers "${label}" for an always-confirmed command: ${question}`);
  }
  if (!question.includes('Always confirmed')) throw new Error(`the card does not say why it always asks: ${question}`);
  await panel.focus('#permission button');
  await page.keyboard.press('Escape');
  await panel.waitForSelector('#permission[hidden]', { state: 'attached', timeout: 10000 });
  await panel.waitForSelector('.tool.failed:has-text("rm -rf ui-denied")', { timeout: 20000 });
  await panel.waitForSelector('.assistant:has-text("Understood: not running it.")', { timeout: 20000 });
  const denied = await panel.$eval('.tool.failed:has-text("rm -rf ui-denied")', (n) => n.textContent);
  if (!/denied/i.test(denied)) throw new Error(`the denial is not shown: ${denied}`);
  await shot(page, 'denied');
  log('Escape on the card denied: the tool result the model got says so');

  await panel.fill('#input', 'start something long');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("partial")', { timeout: 20000 });
  await panel.waitForSelector('#working:not([hidden])');
  await panel.focus('#input');
  await page.keyboard.press('Escape');
  await panel.waitForSelector('.turn-end.aborted:has-text("cancelled")', { timeout: 10000 });
  await panel.waitForSelector('#working[hidden]', { state: 'attached', timeout: 10000 });
  await panel.fill('#input', 'start again');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("again")', { timeout: 20000 });
  await panel.click('#cancel');
  await panel.waitForSelector('.turn-end.aborted:has-text("turn 6")', { timeout: 10000 });
  log('Esc in the panel cancelled the running turn; so did one click on Stop');

  await panel.fill('#input', 'take your time');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('#working:not([hidden])', { timeout: 10000 });
  await page.waitForSelector('.statusbar-item:has-text("Agent: running")', { timeout: 10000 });
  await panel.fill('#input', 'do this afterwards');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('#queue .queued:has-text("do this afterwards")', { timeout: 10000 });
  await shot(page, 'queue');
  await panel.click('#queue .queued:has-text("do this afterwards") button[aria-label="Remove before it runs"]');
  await panel.waitForSelector('#queue .queued', { state: 'detached', timeout: 10000 });
  log('queued while running, then removed');
  await panel.fill('#input', 'also check the tests');
  await panel.press('#input', 'Alt+Enter');
  await panel.waitForSelector('.assistant:has-text("Steered: ok.")', { timeout: 20000 });
  await panel.waitForSelector('#working[hidden]', { state: 'attached', timeout: 10000 });
  const users = await panel.$$eval('.user .user-text', (nodes) => nodes.map((n) => n.textContent));
  if (users.includes('do this afterwards')) throw new Error('a removed message ran');
  if (!users.includes('also check the tests')) throw new Error('the steer did not arrive');
  log('steered with Alt+Enter');
  await page.waitForSelector('.statusbar-item:has-text("Agent"):not(:has-text("running"))', { timeout: 10000 });
  log('the status bar said "Agent: running" while it ran, "Agent" after');
  await panel.check('#attach'); // attach the active editor (off in this workspace's settings)
  await panel.fill('#input', 'stream a lot');
  const t0 = Date.now();
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.user:has-text("stream a lot") .chip:text-is("hello.py")', { timeout: 10000 });
  await panel.uncheck('#attach');
  await panel.waitForSelector('.assistant:has-text("END-OF-STREAM")', { timeout: 30000 });
  const ms = Date.now() - t0;
  log(`${LONG.length} chunks at 5 ms each (nominal ${LONG.length * 5} ms): fully rendered after ${ms} ms`);
  await shot(page, 'stream');

  // Ask about the selection with its keybinding, from the editor.
  await page.click('.monaco-editor .view-lines');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Control+Alt+A');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10000 });
  await page.keyboard.type('what does this do?');
  await page.keyboard.press('Enter');
  await panel.waitForSelector('.user:has-text("what does this do?") .chip:text-is("hello.py:1")', { timeout: 15000 });
  await panel.waitForSelector('.assistant:has-text("About the selection.")', { timeout: 15000 });
  log('Ctrl+Alt+A asked about the selection (attached as hello.py:1)');

  await runCommand(page, 'Agent: Compact the Conversation');
  await panel.waitForSelector('.compaction.done:has-text("Conversation compacted")', { timeout: 15000 });
  await panel.click('.compaction summary');
  await panel.waitForSelector('.compaction-summary:has-text("SUMMARY: a greeting")');
  await shot(page, 'compacted');
  log('compacted: the transcript shows it, with the summary');

  // Plan mode: the panel's switch; the agent's edit is refused and its plan is a checklist.
  await panel.check('#plan-mode');
  await panel.waitForSelector('.notice:has-text("Plan mode on")', { timeout: 10000 });
  await panel.fill('#input', 'PLAN-UI plan a greeting change');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("Planned.")', { timeout: 20000 });
  await panel.waitForSelector('.plan:has-text("Plan · 1 of 2 done")', { timeout: 5000 });
  const checked = await panel.$$eval('.plan-entry input', (boxes) => boxes.map((b) => b.checked));
  if (JSON.stringify(checked) !== '[true,false]') throw new Error(`the plan's checkboxes are ${JSON.stringify(checked)}`);
  const refused = await panel.$eval('.tool.failed:has-text("edit_file") .tool-error', (n) => n.textContent);
  if (!refused.includes('Plan mode is on')) throw new Error(`the refused edit does not say why: ${refused}`);
  if (fs.readFileSync(path.join(workspace.ws, 'hello.py'), 'utf8').includes('plan')) throw new Error('plan mode let an edit through');
  await shot(page, 'plan');
  await panel.uncheck('#plan-mode');
  await panel.waitForSelector('.notice:has-text("Plan mode off")', { timeout: 10000 });
  log('plan mode: the edit was refused with the reason, the plan shows as a checklist');

  // A sub-agent: a card with its status and report, opening its own transcript.
  await panel.fill('#input', 'DELEGATE-UI ask a sub-agent');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("Delegated.")', { timeout: 20000 });
  await panel.waitForSelector('.subagent.completed:has-text("count the lines"):has-text("completed")', { timeout: 5000 });
  await panel.click('.subagent summary');
  await panel.waitForSelector('.subagent .subagent-report:has-text("hello.py has one line.")');
  await shot(page, 'subagent');
  await panel.click('.subagent-actions button:has-text("Open transcript")');
  await panel.waitForSelector('.user:has-text("SUB-UI count the lines of hello.py")', { timeout: 10000 });
  await panel.waitForSelector('.assistant:has-text("hello.py has one line.")', { timeout: 10000 });
  if (await panel.$('.assistant:has-text("Delegated.")')) throw new Error("the sub-agent's transcript shows the parent's answer");
  await page.click('.action-label[aria-label^="Resume Session"]');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("hi there")', { timeout: 10000 });
  await page.click('.quick-input-list .monaco-list-row:has-text("hi there")');
  await panel.waitForSelector('.assistant:has-text("Delegated.")', { timeout: 10000 });
  log("sub-agent: a card with its status and report; its own transcript opened from it");

  // The API key goes to the secret storage, never to settings.json.
  const secret = 'sk-ui-secret-4711';
  await runCommand(page, 'Agent: Set API Key');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("openai")', { timeout: 10000 });
  await page.keyboard.type('openai');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.quick-input-widget input[type="password"]', { state: 'visible', timeout: 10000 });
  await page.keyboard.type(secret);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.notification-toast:has-text("the openai key is stored")', { timeout: 10000 });
  for (const file of [path.join(workspace.ws, '.vscode', 'settings.json'), path.join(workspace.data, 'User', 'settings.json'), path.join(workspace.data, 'Machine', 'settings.json')]) {
    if (fs.readFileSync(file, 'utf8').includes(secret)) throw new Error(`the API key was written to ${file}`);
  }
  log('API key stored through "Set API Key…"; no settings.json has it');

  // New session, then resume the first one from the panel's title bar.
  const before = await panel.$$eval('#transcript .item', (nodes) => nodes.length);
  await page.click('.action-label[aria-label^="New Session"]');
  await panel.waitForSelector('#empty:not([hidden])', { timeout: 10000 });
  if ((await panel.$$('#transcript .item')).length) throw new Error('a new session shows old items');
  await page.click('.action-label[aria-label^="Resume Session"]');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("hi there")', { timeout: 10000 });
  await shot(page, 'resume');
  await page.click('.quick-input-list .monaco-list-row:has-text("hi there")');
  await panel.waitForSelector('.assistant:has-text("About the selection.")', { timeout: 10000 });
  // The session replays in pages: wait for the last page before counting.
  await panel.waitForFunction((n) => document.querySelectorAll('#transcript .item').length >= n, before, { timeout: 10000 })
    .catch(() => {});
  const resumed = await panel.$$eval('#transcript .item', (nodes) => nodes.length);
  if (resumed !== before) throw new Error(`${before} transcript items before, ${resumed} resumed`);
  log(`new session (+), then resumed the first from the history list: ${resumed} items as before`);

  // Reloading the window loses nothing. (The workbench writes workspace state
  // to the browser's storage ~100 ms after a change; a reload at the same
  // instant as the resume could lose that write, which no user does.)
  await new Promise((r) => setTimeout(r, 500));
  await page.reload();
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  const reloaded = await panelFrame(page);
  await reloaded.waitForSelector('.assistant:has-text("About the selection.")', { timeout: 30000 });
  await reloaded.waitForSelector('.revert-note:has-text("reverted hello.py")', { timeout: 5000 });
  // As after the resume: the last page may still be on its way.
  await reloaded.waitForFunction((n) => document.querySelectorAll('#transcript .item').length >= n, before, { timeout: 10000 }).catch(() => {});
  const after = await reloaded.$$eval('#transcript .item', (nodes) => nodes.length);
  if (after !== before) throw new Error(`${before} transcript items before the reload, ${after} after`);
  await shot(page, 'reloaded');
  log(`after reloading the window the panel shows the same ${after} items`);

  // A session another window has open (a copy of this one whose lock a second
  // process holds, with the server's flock protocol): read-only, with the
  // banner; Enter in the input starts a new session and keeps the typed text.
  const sessionsDir = path.join(work, 'sessions');
  const logs = fs.readdirSync(sessionsDir).flatMap((d) => {
    const dir = path.join(sessionsDir, d);
    return fs.statSync(dir).isDirectory() ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(dir, f)) : [];
  });
  const source = logs.sort((x, y) => fs.statSync(y).size - fs.statSync(x).size)[0];
  const heldId = `s_${Date.now().toString(16)}_feedbeef`;
  const lines = fs.readFileSync(source, 'utf8').split('\n');
  lines[0] = JSON.stringify({ ...JSON.parse(lines[0]), id: heldId, title: 'Held in another window' });
  fs.writeFileSync(path.join(path.dirname(source), `${heldId}.jsonl`), lines.join('\n'));
  const holdLock = [
    'import fcntl, json, os, sys',
    'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)',
    'fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)',
    'os.ftruncate(fd, 0)',
    'os.write(fd, json.dumps({"pid": os.getpid()}).encode())',
    'print("held", flush=True)',
    'sys.stdin.read()',
  ].join('\n');
  const holder = spawn(python, ['-c', holdLock, path.join(path.dirname(source), `${heldId}.lock`)], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve, reject) => {
      holder.stdout.once('data', resolve);
      holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
    });
    await page.click('.action-label[aria-label^="Resume Session"]');
    await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Held in another window")', { timeout: 10000 });
    await page.click('.quick-input-list .monaco-list-row:has-text("Held in another window")');
    await reloaded.waitForSelector(
      `#readonly:not([hidden]):has-text("of a session open in another window (pid ${holder.pid}) — read-only; start a new session to continue.")`,
      { timeout: 10000 },
    );
    await reloaded.waitForSelector('.assistant:has-text("About the selection.")', { timeout: 5000 });
    await reloaded.waitForSelector('#send:text-is("New session")');
    await reloaded.waitForSelector('#status:text-is("read-only")');
    await page.waitForSelector('.statusbar-item:has-text("Agent: read-only")', { timeout: 5000 });
    await shot(page, 'read-only');
    await reloaded.click('#input');
    await page.keyboard.type('keep me');
    await page.keyboard.press('Enter');
    await reloaded.waitForSelector('#empty:not([hidden])', { timeout: 10000 });
    await reloaded.waitForSelector('#readonly', { state: 'hidden' });
    await reloaded.waitForSelector('#send:text-is("Send")');
    const kept = await reloaded.$eval('#input', (node) => node.value);
    if (kept !== 'keep me') throw new Error(`the typed text was not kept: ${JSON.stringify(kept)}`);
    const toasts = await page.$$eval('.notification-toast', (nodes) => nodes.map((n) => n.textContent));
    if (toasts.some((t) => /could not|failed/i.test(t))) throw new Error(`an error message: ${JSON.stringify(toasts)}`);
    await reloaded.$eval('#input', (node) => { node.value = ''; });
  } finally {
    holder.stdin.end();
  }
  log(`a session open in another process (pid ${holder.pid}): read-only banner, "New session" in the input, Enter started one keeping the text`);

  // (Enter in the read-only session started a new one: the clicks run in it.)
  await clicks(page, { panel: reloaded, log, shot });
  await slashMenu(page, { panel: reloaded, log, shot });
  await refusedKey(page, { panel: reloaded, ws: workspace.ws, data: workspace.data, log, shot });

  // A server that cannot start: one message, with the fix.
  await runCommand(page, 'Notifications: Clear All Notifications');
  const settingsFile = path.join(workspace.data, 'Machine', 'settings.json');
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'agentLsp.server.path': '/nonexistent/agent-lsp' }, null, 2));
  await page.waitForSelector('.notification-toast:has-text("could not start")', { timeout: 20000 });
  await reloaded.waitForSelector('#banner.failed:has-text("agentLsp.server.path")', { timeout: 10000 });
  await reloaded.waitForSelector('#status:text-is("no server")', { timeout: 5000 }); // not "idle": nothing would answer
  await new Promise((r) => setTimeout(r, 1500)); // would a second message come?
  const toasts = await page.$$eval('.notification-toast', (nodes) => nodes.map((n) => n.textContent));
  if (toasts.length !== 1) throw new Error(`expected one message, got ${toasts.length}: ${JSON.stringify(toasts)}`);
  await shot(page, 'no-server');
  log(`a server that cannot start: one message (${toasts[0].slice(0, 90)}…)`);
}

await main();
