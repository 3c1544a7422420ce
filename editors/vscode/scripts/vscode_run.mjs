// Runs the extension in real VS Code (code-server 4.100.3) driven by Debian's
// Chromium through playwright-core, against the real agent_lsp server with
// the scripted model.
//
//   node scripts/vscode_run.mjs exttest   the suite in exttest/ inside the extension host
//   node scripts/vscode_run.mjs ui        type in the panel, see the answer and the edit; screenshot
//
// Env: CODE_SERVER (default .work/code-server), CHROMIUM (default /usr/bin/chromium),
// AGENT_LSP_PYTHON (default <repo>/.venv/bin/python), ARTIFACTS (default .work/artifacts).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

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
  ],
  ui: [
    { text: HELLO },
    editReply,
    { text: EDITED },
    { text: SLOW, chunkDelayMs: 40 },
    { text: 'Steered: ok.' },
    { text: LONG, chunkDelayMs: 5 },
  ],
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
        'agentLsp.server.pythonPath': python,
        'agentLsp.model': { provider: 'scripted', script: scripts[mode] },
        'agentLsp.sessionsDir': path.join(work, 'sessions'),
        'agentLsp.attachActiveEditor': false,
      },
      null,
      2,
    ),
  );
  const data = path.join(work, 'data');
  fs.mkdirSync(path.join(data, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(data, 'User', 'settings.json'),
    JSON.stringify({ 'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false, 'telemetry.telemetryLevel': 'off', 'workbench.tips.enabled': false, 'git.openRepositoryInParentFolders': 'never' }),
  );
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

async function main() {
  const { ws, data } = prepare();
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
    const payload = [['extensionDevelopmentPath', remote(extDir)]];
    if (mode === 'exttest') {
      payload.push(['extensionTestsPath', remote(path.join(extDir, 'out-exttest', 'exttest', 'suite.js'))]);
    }
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    log('workbench loaded');
    if (mode === 'exttest') {
      await waitForFile(resultFile, 180000);
      const result = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
      for (const o of result.outcomes) {
        log(`${o.ok ? 'ok  ' : 'FAIL'} ${o.name} (${o.ms} ms)${o.ok ? '' : `\n${o.error}`}`);
      }
      await page.screenshot({ path: path.join(artifacts, 'vscode-exttest.png') });
      if (!result.ok) throw new Error('extension-host tests failed');
      log(`PASS ${result.outcomes.length} extension-host tests`);
    } else {
      await uiSmoke(page);
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

async function uiSmoke(page) {
  // Open hello.py so the edit lands in a visible buffer.
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
  await page.keyboard.type('hello.py');
  await page.waitForSelector('.quick-input-list .monaco-list-row', { timeout: 10000 });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.view-lines:has-text("hello world")', { timeout: 15000 });
  log('hello.py open');
  await runCommand(page, 'Agent: Open Agent Panel');
  const panel = await panelFrame(page);
  await panel.waitForSelector('#banner[hidden]', { state: 'attached', timeout: 30000 });
  log('panel open, server running');
  await panel.click('#input');
  await panel.fill('#input', 'hi there');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("Hello from the scripted model.")', { timeout: 20000 });
  await panel.waitForSelector('.assistant strong:has-text("scripted")');
  log('streamed answer rendered (markdown)');
  await panel.fill('#input', 'please change hello.py');
  await panel.press('#input', 'Enter');
  await page.waitForSelector('.view-lines:has-text("hello agent")', { timeout: 20000 });
  log('edit visible in the editor');
  await panel.waitForSelector(`.assistant:has-text("${EDITED}")`, { timeout: 20000 });
  await panel.waitForSelector('.tool.done:has-text("edit_file")');
  await panel.waitForSelector('button:has-text("Revert this turn")');
  log('tool card done, revert offered');
  await panel.fill('#input', 'take your time');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('#working:not([hidden])', { timeout: 10000 });
  await panel.fill('#input', 'do this afterwards');
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('#queue .queued:has-text("do this afterwards")', { timeout: 10000 });
  await page.screenshot({ path: path.join(artifacts, 'vscode-ui-queue.png') });
  await panel.click('#queue .queued:has-text("do this afterwards") button');
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
  await panel.fill('#input', 'stream a lot');
  const t0 = Date.now();
  await panel.press('#input', 'Enter');
  await panel.waitForSelector('.assistant:has-text("END-OF-STREAM")', { timeout: 30000 });
  const ms = Date.now() - t0;
  log(`${LONG.length} chunks at 5 ms each (nominal ${LONG.length * 5} ms): fully rendered after ${ms} ms`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-ui.png') });
}

await main();
