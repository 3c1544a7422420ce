// Tests that run inside the real VS Code extension host (code-server), against
// the real agent_lsp server with the scripted model. Loaded through the
// workbench's extensionTestsPath; results go to $EXT_TEST_RESULT as JSON.
//
// The workspace (scripts/exttest.mjs makes it) has hello.py and settings that
// start `<python> -m agent_lsp` with this script, consumed one reply per model call:
//   0 {"text": HELLO}
//   1 {"text": "Editing.", "tools": [edit_file hello.py world -> agent]}
//   2 {"text": EDITED}
//   3 {"text": "Running.", "tools": [run_command "echo from-agent"]}   (asks permission)
//   4 {"text": "Ran it."}
//   5 {"hang": "partial"}                       (cancelled by the test)
//   6 {"text": SLOW, "chunkDelayMs": 60}        (steered and queued while it streams)
//   7 {"text": "steered"}
//   8 {"text": "queued ran"}
//   9 {"fail": "AUTH", "message": "Set OPENAI_API_KEY"}
// and replies only the prompts PLAN-EXT, DELEGATE-EXT, MCP-EXT, SKILL-EXT,
// RENAME-TS, BREAK-TS, CLEAN-TS, UNOPENED-TS and CALLER-TS (and the sub-agent's task SUB-EXT) take, whenever they come.
// (a restarted server starts the script again from reply 0: after the resume
// test, 0 answers the code action, 1-2 edit again for the revert-after-restart
// test, and after that test's restart 0 is the summary of the compaction)

import * as assert from 'assert';
import * as cp from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { AgentLspApi } from '../src/extension';
import type { Item } from '../src/transcript';
import { nestSessions } from '../src/subagents';
import { languageBench } from './languageBench';

export const HELLO = 'Hello from the **scripted** model.';
export const EDITED = 'I changed hello.py.';
export const SLOW = 'working slowly on it, step by step';

interface Outcome {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
  figures?: string[];
}

/** Python that holds a session's lock the way agent_lsp.store.lock does
 * (exclusive flock, the holder's pid in the file) until its stdin closes. */
const HOLD_LOCK = [
  'import fcntl, json, os, sys',
  'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)',
  'fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)',
  'os.ftruncate(fd, 0)',
  'os.write(fd, json.dumps({"pid": os.getpid()}).encode())',
  'print("held", flush=True)',
  'sys.stdin.read()',
].join('\n');

async function waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 15000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value) {
      return value;
    }
    if (Date.now() - start > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

function view(items: Item[]): unknown[] {
  return items.map((item) => {
    const { rev: _rev, ...rest } = item as any;
    if (rest.kind === 'tool') {
      rest.progress = ''; // live-only output is not part of the durable log
    }
    return rest;
  });
}

/** A two-line file open in an editor, and the workspace settings with a model that edits both of its lines. */
async function reviewSetup(name: string) {
  const folder = vscode.workspace.workspaceFolders![0].uri;
  const file = vscode.Uri.joinPath(folder, name);
  fs.writeFileSync(file.fsPath, 'a = 1\nb = 2\n');
  const doc = await vscode.workspace.openTextDocument(file);
  await vscode.window.showTextDocument(doc);
  const settingsFile = path.join(folder.fsPath, '.vscode', 'settings.json');
  const original = fs.readFileSync(settingsFile, 'utf8');
  const settings = JSON.parse(original);
  const edit = { name: 'edit_file', arguments: { path: name, edits: [{ oldText: 'a = 1', newText: 'a = 10' }, { oldText: 'b = 2', newText: 'b = 20' }] } };
  settings['agentLsp.model'] = { ...settings['agentLsp.model'], script: [{ tools: [edit] }, { text: 'Edited for review.' }] };
  return { folder, file, doc, settingsFile, original, settings };
}

/** The server's output as VS Code logged it (the agent_lsp output channel's file in this run's logs). */
function serverLog(): string {
  const logs = path.join(path.dirname(process.env.EXT_TEST_RESULT ?? ''), 'data', 'logs');
  const files = fs.existsSync(logs)
    ? fs.readdirSync(logs).map((d) => path.join(logs, d, 'exthost1', 'agent-lsp.agent-lsp', 'agent_lsp.log')).filter((f) => fs.existsSync(f))
    : [];
  assert.ok(files.length, `the output channel's log file under ${logs}`);
  return fs.readFileSync(files.sort().reverse()[0], 'utf8');
}

/** A port on this machine that nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function api(): Promise<AgentLspApi> {
  const ext = vscode.extensions.getExtension<AgentLspApi>('agent-lsp.agent-lsp');
  assert.ok(ext, 'the extension is installed');
  return ext.activate();
}

async function idleAfter(a: AgentLspApi, turnEnds: number): Promise<void> {
  await waitFor('the turn to end', () => a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length >= turnEnds);
  await waitFor('status idle', () => a.sessions.status === 'idle');
}

const tests: [string, () => Promise<void>][] = [
  [
    'the extension activates and starts the real server',
    async () => {
      const a = await api();
      await a.whenServerReady();
      assert.equal(a.serverState(), 'running');
      const commands = await vscode.commands.getCommands(true);
      for (const id of ['agentLsp.followup', 'agentLsp.cancel', 'agentLsp.newSession', 'agentLsp.resumeSession', 'agentLsp.revertTurn']) {
        assert.ok(commands.includes(id), `${id} is registered`);
      }
    },
  ],
  [
    'a followup streams into the transcript and the panel',
    async () => {
      const a = await api();
      await vscode.commands.executeCommand('agentLsp.focus');
      await waitFor('the panel to load', () => a.panel.lastRendered);
      const { sessionId } = await a.send('hi there');
      assert.equal(sessionId, a.sessions.sessionId);
      await idleAfter(a, 1);
      const texts = a.sessions.transcript.items.filter((i) => i.kind === 'text').map((i) => (i as any).text);
      assert.deepEqual(texts, [HELLO]);
      const user = a.sessions.transcript.items.find((i) => i.kind === 'user') as any;
      assert.equal(user.text, 'hi there');
      // The panel draws asynchronously: the answer may show one render before the turn's footer.
      const rendered = await waitFor('the panel to render the answer and the turn footer', () => {
        const last = a.panel.lastRendered;
        return last?.lastText === HELLO && last.items >= 3 ? last : null;
      });
      assert.ok(rendered.items >= 3, `user, answer and turn footer rendered (${rendered.items})`);
    },
  ],
  [
    'an agent edit lands in the open buffer and is saved to disk',
    async () => {
      const a = await api();
      const folder = vscode.workspace.workspaceFolders![0].uri;
      const file = vscode.Uri.joinPath(folder, 'hello.py');
      const doc = await vscode.workspace.openTextDocument(file);
      await vscode.window.showTextDocument(doc);
      const asked: string[] = [];
      a.setPermissionHandler(async (p) => {
        asked.push(`${p.tool} ${p.path ?? p.command ?? p.title}`);
        return 'session';
      });
      await a.send('please change hello.py');
      await idleAfter(a, 2);
      assert.match(doc.getText(), /print\("hello agent"\)/);
      assert.equal(doc.isDirty, false, 'saved after the edit (agentLsp.saveAgentEdits)');
      assert.match(fs.readFileSync(file.fsPath, 'utf8'), /hello agent/);
      const tool = a.sessions.transcript.items.find((i) => i.kind === 'tool') as any;
      assert.equal(tool.name, 'edit_file');
      assert.equal(tool.status, 'done');
      assert.equal(typeof tool.meta?.diff, 'string', 'the result carries a diff for "Show diff"');
      const end = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'turn-end') as any;
      assert.equal(end.hasEdits, true, 'the turn offers "Revert this turn"');
      const texts = a.sessions.transcript.items.filter((i) => i.kind === 'text').map((i) => (i as any).text);
      assert.equal(texts[texts.length - 1], EDITED);
      assert.deepEqual(asked, [], 'edits are allowed by default: no question');
    },
  ],
  [
    '"Show diff" opens the diff editor between the text before the edit and the file now',
    async () => {
      const a = await api();
      const tool = a.sessions.transcript.items.find((i) => i.kind === 'tool') as any;
      await vscode.commands.executeCommand('agentLsp.showDiff', tool.callId);
      const tab = await waitFor('a diff tab', () => {
        const active = vscode.window.tabGroups.activeTabGroup.activeTab;
        return active?.input instanceof vscode.TabInputTextDiff ? active.input : null;
      });
      assert.match(tab.modified.path, /hello\.py$/);
      const original = await vscode.workspace.openTextDocument(tab.original);
      assert.equal(original.getText(), 'print("hello world")\n');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    },
  ],
  [
    'reverting the editing turn restores the buffer and the file',
    async () => {
      const a = await api();
      const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, 'hello.py');
      const doc = await vscode.workspace.openTextDocument(file);
      assert.match(doc.getText(), /hello agent/);
      const result = await a.sessions.revertTurn(2);
      assert.deepEqual(result.skipped, [], JSON.stringify(result));
      assert.equal(result.reverted.length, 1, JSON.stringify(result));
      await waitFor(`the buffer to be reverted (${JSON.stringify(result)})`, () => /hello world/.test(doc.getText()));
      await waitFor('the revert to be saved', () => !doc.isDirty && /hello world/.test(fs.readFileSync(file.fsPath, 'utf8')));
    },
  ],
  [
    'a command asks permission in the panel naming the exact command, "waiting for you" meanwhile; the rule is listed and revoked',
    async () => {
      const a = await api();
      a.setPermissionHandler(null); // the panel asks (an earlier test answered through a handler)
      const turns = a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length;
      await a.send('run something');
      const card = await waitFor('the question in the panel', () => a.questions.card);
      assert.match(card.message, /The agent wants to run echo from-agent/);
      const rendered = await waitFor('the panel to draw the card', () => (a.panel.lastRendered?.actions.includes('Allow once') ? a.panel.lastRendered : null));
      assert.deepEqual(rendered.actions.slice(0, 4), ['Allow once', 'Allow for this session', 'Always allow', 'Deny']);
      assert.equal(rendered.status, 'waiting');
      assert.match(a.statusBarText(), /waiting for you/);
      a.questions.answer(card.id, 'session'); // what the card's "Allow for this session" button posts
      await idleAfter(a, turns + 1);
      await waitFor('the card to go away', () => a.panel.lastRendered?.status === 'idle' && !a.panel.lastRendered.actions.includes('Allow once'));
      assert.doesNotMatch(a.statusBarText(), /waiting/);
      const tool = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'tool') as any;
      assert.equal(tool.name, 'run_command');
      assert.equal(tool.status, 'done');
      assert.match(tool.output, /from-agent/);

      const rules: any[] = await a.client()!.sendRequest('agent/permission/rules', {});
      const remembered = (rules as any).rules.find((r: any) => r.scope === 'session');
      assert.equal(remembered.commandPrefix, 'echo from-agent');
      const left = (await vscode.commands.executeCommand('agentLsp.managePermissions', remembered.id)) as any[];
      assert.ok(!left.some((r) => r.id === remembered.id), 'the revoked rule is gone');
    },
  ],
  [
    'cancel stops a running turn',
    async () => {
      const a = await api();
      await a.send('start something long');
      await waitFor('the hanging reply to stream', () => a.sessions.transcript.items.some((i) => i.kind === 'text' && (i as any).text === 'partial'));
      assert.equal(a.sessions.status, 'running');
      await vscode.commands.executeCommand('agentLsp.cancel');
      await idleAfter(a, 4);
      const end = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'turn-end') as any;
      assert.equal(end.reason, 'aborted');
    },
  ],
  [
    'while a turn runs, queued messages wait (and can be removed) and a steer joins the running turn',
    async () => {
      const a = await api();
      await a.send('slow task');
      await waitFor('the slow reply to start', () => a.sessions.transcript.items.some((i) => i.kind === 'text' && (i as any).text.startsWith('wor')));
      const one = await a.send('queued one', 'queue');
      const two = await a.send('queued two', 'queue');
      await waitFor('both queued', () => a.sessions.transcript.inbox.nextTurn.length === 2);
      assert.deepEqual(a.sessions.transcript.inbox.nextTurn.map((m) => m.id), [one.messageId, two.messageId]);
      assert.equal(await a.sessions.removeQueued(two.messageId), true);
      await waitFor('the removal', () => a.sessions.transcript.inbox.nextTurn.length === 1);
      await a.send('steer now', 'steer');
      await idleAfter(a, 6);
      const users = a.sessions.transcript.items.filter((i) => i.kind === 'user').slice(-3) as any[];
      assert.deepEqual(users.map((u) => u.text), ['slow task', 'steer now', 'queued one']);
      assert.equal(users[1].turn, users[0].turn, 'the steer entered the running turn');
      assert.equal(users[2].turn, users[0].turn + 1, 'the queued message ran as the next turn');
      const texts = a.sessions.transcript.items.filter((i) => i.kind === 'text').slice(-3).map((i) => (i as any).text);
      assert.deepEqual(texts, [SLOW, 'steered', 'queued ran']);
      assert.ok(!a.sessions.transcript.items.some((i) => i.kind === 'user' && (i as any).text === 'queued two'));
    },
  ],
  [
    'a failed turn shows the error where it happened',
    async () => {
      const a = await api();
      const turns = a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length;
      await a.send('this one fails');
      await idleAfter(a, turns + 1);
      const tail = a.sessions.transcript.items.slice(-3).map((i) => i.kind);
      assert.deepEqual(tail, ['user', 'error', 'turn-end']);
      const error = a.sessions.transcript.items[a.sessions.transcript.items.length - 2] as any;
      assert.equal(error.code, 'AUTH');
      assert.match(error.message, /OPENAI_API_KEY/);
      const end = a.sessions.transcript.items[a.sessions.transcript.items.length - 1] as any;
      assert.equal(end.reason, 'error');
      // The failed turn's Retry button runs this command.
      await vscode.commands.executeCommand('agentLsp.retryTurn'); // what "Retry" runs
      await idleAfter(a, turns + 2);
      const users = a.sessions.transcript.items.filter((i) => i.kind === 'user').map((i) => (i as any).text);
      assert.deepEqual(users.slice(-2), ['this one fails', 'this one fails']);
      const retried = a.sessions.transcript.items[a.sessions.transcript.items.length - 1] as any;
      assert.equal(retried.reason, 'completed');
      const check = (await vscode.commands.executeCommand('agentLsp.checkModel')) as any;
      assert.equal(check.ok, true);
      assert.equal(check.provider, 'scripted');
    },
  ],
  [
    'a resumed session matches what was shown live, also after a server restart',
    async () => {
      const a = await api();
      const sessionId = a.sessions.sessionId!;
      const live = view(a.sessions.transcript.items);
      await vscode.commands.executeCommand('agentLsp.restartServer');
      await a.whenServerReady();
      await waitFor('the session to be restored', () => a.sessions.sessionId === sessionId && a.sessions.transcript.items.length > 0);
      assert.deepEqual(view(a.sessions.transcript.items), live);
      await vscode.commands.executeCommand('agentLsp.newSession');
      assert.notEqual(a.sessions.sessionId, sessionId);
      assert.equal(a.sessions.transcript.items.length, 0);
      await vscode.commands.executeCommand('agentLsp.resumeSession', sessionId);
      assert.deepEqual(view(a.sessions.transcript.items), live);
      const rendered = await waitFor('the panel to show the resumed session', () =>
        a.panel.lastRendered?.items === live.length ? a.panel.lastRendered : null,
      );
      assert.equal(rendered.items, live.length);
    },
  ],
  [
    'a session replayed a few events a page draws progressively and ends as it was shown live',
    async () => {
      const a = await api();
      const sessionId = a.sessions.sessionId!;
      const live = view(a.sessions.transcript.items);
      await vscode.commands.executeCommand('agentLsp.newSession');
      const counts: number[] = [];
      const watch = a.sessions.onDidChange(() => counts.push(a.sessions.transcript.items.length));
      a.sessions.pageSize = 3;
      try {
        await vscode.commands.executeCommand('agentLsp.resumeSession', sessionId);
      } finally {
        a.sessions.pageSize = 200;
        watch.dispose();
      }
      assert.deepEqual(view(a.sessions.transcript.items), live);
      // drawn while the pages came: the transcript showed part of the session first
      assert.ok(counts.some((n) => n > 0 && n < live.length), `drawn: ${counts.join(', ')} of ${live.length}`);
      const rendered = await waitFor('the panel to show the replayed session', () =>
        a.panel.lastRendered?.items === live.length ? a.panel.lastRendered : null,
      );
      assert.equal(rendered.items, live.length);
    },
  ],
  [
    "the server's code action \"Ask agent about selection\" goes to the panel's session with the selection",
    async () => {
      const a = await api();
      const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, 'hello.py');
      const doc = await vscode.workspace.openTextDocument(file);
      const editor = await vscode.window.showTextDocument(doc);
      const range = new vscode.Range(0, 0, 0, 5);
      editor.selection = new vscode.Selection(range.start, range.end);
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', file, range);
      const ask = actions.find((x) => x.title === 'Ask agent about selection');
      assert.ok(ask?.command, `offered: ${actions.map((x) => x.title).join(', ')}`);
      const turns = a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length;
      await vscode.commands.executeCommand(ask.command.command, ...(ask.command.arguments ?? []));
      await idleAfter(a, turns + 1);
      const user = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'user') as any;
      assert.equal(user.context.length, 1);
      assert.equal(user.context[0].kind, 'selection');
      assert.equal(user.context[0].text, 'print');
      const texts = a.sessions.transcript.items.filter((i) => i.kind === 'text').map((i) => (i as any).text);
      assert.equal(texts[texts.length - 1], HELLO, 'answered in the panel (the restarted server replays the script from reply 0)');
    },
  ],
  [
    '"Revert this turn" after a server restart asks the server, which reverts from the session log',
    async () => {
      const a = await api();
      const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, 'hello.py');
      const doc = await vscode.workspace.openTextDocument(file);
      assert.match(doc.getText(), /hello world/);
      const turns = a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length;
      await a.send('please change hello.py'); // replies 1 and 2 of the restarted server's script
      await idleAfter(a, turns + 1);
      await waitFor('the edit to be saved', () => !doc.isDirty && /hello agent/.test(fs.readFileSync(file.fsPath, 'utf8')));
      const end = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'turn-end') as any;
      assert.equal(end.hasEdits, true, JSON.stringify(view(a.sessions.transcript.items.slice(-6))));
      const sessionId = a.sessions.sessionId;
      await vscode.commands.executeCommand('agentLsp.restartServer');
      await a.whenServerReady();
      await waitFor('the session to be restored', () => a.sessions.sessionId === sessionId && a.sessions.transcript.items.length > 0);
      const outcome = (await vscode.commands.executeCommand('agentLsp.revertTurn')) as any;
      assert.deepEqual(outcome.skipped, [], JSON.stringify(outcome));
      assert.equal(outcome.reverted.length, 1, JSON.stringify(outcome));
      assert.deepEqual(outcome.reverted, ["hello.py"], "named relative to the workspace");
      assert.deepEqual(a.sessions.reverts[end.turn], outcome, 'the panel shows the answer under the turn');
      await waitFor('the buffer and the file to be reverted', () => /hello world/.test(doc.getText()) && !doc.isDirty && /hello world/.test(fs.readFileSync(file.fsPath, 'utf8')));
      const again = (await vscode.commands.executeCommand('agentLsp.revertTurn', end.turn)) as any;
      assert.deepEqual(again.reverted, [], `a second revert changes nothing: ${JSON.stringify(again)}`);
      assert.match(doc.getText(), /hello world/);
      // The server logs the revert (turn/revert): it reaches the transcript live
      // and is replayed after a restart, so every client shows it under the turn.
      const logged = () => a.sessions.transcript.reverts.get(end.turn);
      await waitFor('the logged revert in the transcript', () => !!logged());
      assert.equal(logged()!.reverted.length, 1, JSON.stringify(logged()));
      assert.ok(logged()!.reverted[0].endsWith('hello.py'), JSON.stringify(logged()));
      await vscode.commands.executeCommand('agentLsp.restartServer');
      await a.whenServerReady();
      await waitFor('the session to be restored', () => a.sessions.sessionId === sessionId && a.sessions.transcript.items.length > 0);
      await waitFor('the replayed revert in the transcript', () => logged()?.reverted.length === 1);
    },
  ],
  [
    'Compact on an idle session summarises it and the transcript shows the compaction',
    async () => {
      const a = await api();
      const before = a.sessions.transcript.items.length;
      const compacted = await vscode.commands.executeCommand('agentLsp.compactSession');
      assert.equal(compacted, true);
      const item = await waitFor('the compaction in the transcript', () =>
        a.sessions.transcript.items.find((i) => i.kind === 'compaction' && i.status === 'done') as any,
      );
      assert.equal(item.summary, HELLO, 'the summary the model wrote (reply 0 of the restarted server)');
      assert.ok(item.tokens > 0);
      assert.equal(a.sessions.transcript.items.length, before + 1, 'the older messages stay visible');
      assert.equal(a.sessions.status, 'idle');
      await waitFor('the panel to render it', () => a.panel.lastRendered?.items === before + 1);
    },
  ],
  [
    'Export Session writes the current session as Markdown',
    async () => {
      const a = await api();
      const target = path.join(os.tmpdir(), `agent-lsp-export-${Date.now()}.md`);
      const written = await vscode.commands.executeCommand('agentLsp.exportSession', undefined, target);
      assert.equal(written, target);
      const markdown = fs.readFileSync(target, 'utf8');
      assert.ok(markdown.includes(`Session \`${a.sessions.sessionId}\``), markdown);
      assert.ok(markdown.includes('## You') && markdown.includes('## Agent'), markdown);
      fs.rmSync(target);
    },
  ],
  [
    'Delete Session removes a session from the list; the current one stays',
    async () => {
      const a = await api();
      const current = a.sessions.sessionId!;
      const spare = (await vscode.commands.executeCommand('agentLsp.newSession')) as string;
      await vscode.commands.executeCommand('agentLsp.resumeSession', current);
      assert.equal(a.sessions.sessionId, current);
      assert.ok((await a.sessions.list()).some((s) => s.sessionId === spare));
      assert.equal(await vscode.commands.executeCommand('agentLsp.deleteSession', spare), true);
      const left = (await a.sessions.list()).map((s) => s.sessionId);
      assert.ok(!left.includes(spare), JSON.stringify(left));
      assert.ok(left.includes(current));
      assert.equal(a.sessions.sessionId, current);
    },
  ],
  [
    'a session open in another process resumes read-only with one explanation; New Session continues',
    async () => {
      const a = await api();
      const current = a.sessions.sessionId!;
      // A copy of the current session under a fresh id, which this window's server
      // never opened, held by another process with the server's own lock protocol.
      const sessionsDir = vscode.workspace.getConfiguration('agentLsp').get<string>('sessionsDir')!;
      const folderDir = fs.readdirSync(sessionsDir).map((d) => path.join(sessionsDir, d)).find((d) => fs.existsSync(path.join(d, `${current}.jsonl`)));
      assert.ok(folderDir, `${current}.jsonl under ${sessionsDir}`);
      const heldId = `s_${Date.now().toString(16)}_0123abcd`;
      const lines = fs.readFileSync(path.join(folderDir, `${current}.jsonl`), 'utf8').split('\n');
      lines[0] = JSON.stringify({ ...JSON.parse(lines[0]), id: heldId });
      fs.writeFileSync(path.join(folderDir, `${heldId}.jsonl`), lines.join('\n'));
      const python = vscode.workspace.getConfiguration('agentLsp').get<string>('server.pythonPath')!;
      const holder = cp.spawn(python, ['-c', HOLD_LOCK, path.join(folderDir, `${heldId}.lock`)], { stdio: ['pipe', 'pipe', 'inherit'] });
      try {
        await new Promise<void>((resolve, reject) => {
          holder.stdout!.once('data', () => resolve());
          holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
        });
        await vscode.commands.executeCommand('agentLsp.focus');
        await vscode.commands.executeCommand('agentLsp.resumeSession', heldId);
        assert.equal(a.sessions.sessionId, heldId);
        assert.deepEqual(a.sessions.heldBy, { sessionId: heldId, pid: holder.pid });
        const texts = (items: Item[]) => items.filter((i) => i.kind === 'text').map((i) => (i as any).text);
        assert.ok(texts(a.sessions.transcript.items).length > 0, 'the transcript is shown');
        await waitFor('the panel to show it read-only', () => a.panel.lastRendered?.status === 'read-only');
        assert.equal(a.heldNoticesShown(), 0, 'resuming explains in the panel, no message');
        // Sending, cancelling (a real -32010 from the server) and compacting: one message in all.
        await vscode.commands.executeCommand('agentLsp.followup', 'continue please');
        await vscode.commands.executeCommand('agentLsp.cancel');
        await vscode.commands.executeCommand('agentLsp.compactSession');
        await vscode.commands.executeCommand('agentLsp.revertTurn', 1);
        assert.equal(a.heldNoticesShown(), 1);
        assert.deepEqual(a.sessions.reverts, {}, 'a refused revert is no outcome of the turn');
        assert.equal(a.sessions.sessionId, heldId, 'still shown, read-only');
        const fresh = (await vscode.commands.executeCommand('agentLsp.newSession')) as string;
        assert.notEqual(fresh, heldId);
        assert.equal(a.sessions.heldBy, null);
        await waitFor('the panel to be writable again', () => a.panel.lastRendered?.status === 'idle');
      } finally {
        holder.stdin!.end(); // the holder exits and the kernel drops its lock
        await new Promise((r) => (holder.exitCode !== null ? r(null) : holder.once('exit', r)));
      }
      // Free again: it loads as ours.
      await vscode.commands.executeCommand('agentLsp.resumeSession', heldId);
      assert.equal(a.sessions.heldBy, null);
      await vscode.commands.executeCommand('agentLsp.resumeSession', current);
      assert.equal(a.sessions.sessionId, current);
    },
  ],
  [
    'fork from a turn opens the new session with the history up to there; rewind cuts it; the queue is edited, reordered and paused',
    async () => {
      const a = await api();
      const before = a.sessions.sessionId!; // the later tests go on with this session
      const turns = a.sessions.transcript.items.filter((i) => i.kind === 'user' && i.turn === 1);
      assert.ok(turns.length, 'the session has a turn 1');
      const forked = (await vscode.commands.executeCommand('agentLsp.forkTurn', 1)) as string;
      assert.notEqual(forked, before);
      assert.equal(a.sessions.sessionId, forked);
      const userTurns = () => [...new Set(a.sessions.transcript.items.filter((i) => i.kind === 'user').map((i) => i.turn))];
      assert.deepEqual(userTurns(), [1]);

      assert.equal(await vscode.commands.executeCommand('agentLsp.rewindTurn', 1, false), true);
      await waitFor('the rewind in the transcript', () => a.sessions.transcript.items.some((i) => i.kind === 'notice' && /rewound/i.test(i.text)));

      await a.sessions.pauseQueue(true);
      await waitFor('the queue paused', () => a.sessions.transcript.queuePaused);
      const alpha = await a.send('alpha');
      const beta = await a.send('beta');
      await waitFor('both queued', () => a.sessions.transcript.inbox.nextTurn.length === 2);
      assert.equal(await a.sessions.moveQueued(beta.messageId, 'next-turn', 0), true);
      await waitFor('beta first', () => a.sessions.transcript.inbox.nextTurn[0]?.id === beta.messageId);
      assert.equal(await vscode.commands.executeCommand('agentLsp.editQueued', alpha.messageId, 'alpha edited'), true);
      await waitFor('the edit', () => (a.sessions.transcript.inbox.nextTurn[1]?.content as any)?.[0]?.text === 'alpha edited');
      for (const id of [alpha.messageId, beta.messageId]) {
        assert.equal(await a.sessions.removeQueued(id), true);
      }
      await a.sessions.pauseQueue(false);
      await waitFor('the queue resumed and empty', () => !a.sessions.transcript.queuePaused && a.sessions.transcript.inbox.nextTurn.length === 0);
      await vscode.commands.executeCommand('agentLsp.resumeSession', before);
      assert.equal(a.sessions.sessionId, before);
    },
  ],
  [
    "the model picker offers the server's models, then the effort; the switch shows in the transcript",
    async () => {
      const a = await api();
      const before = a.sessions.sessionId!; // the later tests go on with this session
      await a.sessions.newSession();
      const switched = vscode.commands.executeCommand('agentLsp.switchModel');
      const models = await waitFor('the model picker', () => a.openModelPick());
      assert.deepEqual(models.items.map((i) => [i.label, i.description]), [['scripted', 'scripted · configured · 128k tokens']]);
      models.activeItems = [models.items[0]];
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      const efforts = await waitFor('the effort picker', () => a.openModelPick() !== models && a.openModelPick());
      assert.deepEqual(efforts.items.map((i) => i.label), ['default', 'minimal', 'low', 'medium', 'high']);
      // as a user does: type to filter, then accept (the widget applies the filter asynchronously)
      efforts.value = 'low';
      efforts.activeItems = [efforts.items.find((i) => i.label === 'low')!];
      await new Promise((r) => setTimeout(r, 500));
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      assert.deepEqual(await switched, { provider: 'scripted', model: 'scripted', effort: 'low' });
      const notice = await waitFor('the switch in the transcript', () =>
        a.sessions.transcript.items.find((i) => i.kind === 'notice' && i.text.startsWith('Model: scripted / scripted, effort low')),
      );
      assert.ok(notice);
      assert.equal(a.sessions.transcript.model, 'scripted / scripted');
      await vscode.commands.executeCommand('agentLsp.resumeSession', before);
      assert.equal(a.sessions.sessionId, before);
    },
  ],
  [
    'plan mode refuses the edit, the plan is a checklist; a sub-agent is a card whose transcript opens',
    async () => {
      const a = await api();
      const before = a.sessions.sessionId!; // the later tests go on with this session
      await a.sessions.newSession();
      await a.sessions.setPlanMode(true);
      await waitFor('plan mode', () => a.sessions.transcript.mode === 'plan');
      await a.send('PLAN-EXT plan a change');
      await idleAfter(a, 1);
      const tools = a.sessions.transcript.items.filter((i) => i.kind === 'tool') as any[];
      const edit = tools.find((t) => t.name === 'edit_file');
      assert.equal(edit.status, 'failed');
      assert.equal(edit.error.code, 'PERMISSION_DENIED');
      assert.match(edit.output, /Plan mode is on/);
      const plan = a.sessions.transcript.items.find((i) => i.kind === 'plan') as any;
      assert.deepEqual(plan.entries, [{ content: 'look', status: 'completed' }, { content: 'change', status: 'pending' }]);
      await a.sessions.setPlanMode(false);
      await waitFor('plan mode off', () => a.sessions.transcript.mode === 'default');

      await a.send('DELEGATE-EXT ask a sub-agent');
      await idleAfter(a, 2);
      const card = [...a.sessions.transcript.subagents.values()][0];
      assert.equal(card.status, 'completed');
      assert.equal(card.description, 'read hello.py');
      const result = (a.sessions.transcript.items.filter((i) => i.kind === 'tool') as any[]).find((t) => t.name === 'subagent');
      assert.equal(result.output, 'It prints a greeting.');
      await waitFor('the panel to render the answer', () => a.panel.lastRendered?.lastText === 'Delegated.');
      await a.sessions.load(card.childSessionId);
      const texts = a.sessions.transcript.items.filter((i) => i.kind === 'text').map((i) => (i as any).text);
      assert.deepEqual(texts, ['It prints a greeting.']);
      await a.sessions.load(before);
    },
  ],
  [
    'a server that cannot start gives one clear error naming the fix; fixing the setting recovers',
    async () => {
      const a = await api();
      const sessionId = a.sessions.sessionId;
      const cfg = vscode.workspace.getConfiguration('agentLsp');
      // a folder's settings cannot name the program (it is the user's setting only)
      await assert.rejects(Promise.resolve(cfg.update('server.path', '/nonexistent/agent-lsp', vscode.ConfigurationTarget.Workspace)), /User settings/);
      await cfg.update('server.path', '/nonexistent/agent-lsp', vscode.ConfigurationTarget.Global);
      await waitFor('the failure', () => a.serverState() === 'failed');
      await assert.rejects(a.whenServerReady(), /could not start: \/nonexistent\/agent-lsp does not exist \(from agentLsp\.server\.path\)\. Fix agentLsp\.server\.path/);
      await cfg.update('server.path', undefined, vscode.ConfigurationTarget.Global);
      await waitFor('the server to run again', () => a.serverState() === 'running', 30000);
      await a.whenServerReady();
      await waitFor('the session to be restored', () => a.sessions.sessionId === sessionId && a.sessions.transcript.items.length > 0);
    },
  ],
  [
    "with no server setting, the workspace's .venv/bin/agent-lsp is the server started",
    async () => {
      const a = await api();
      const cfg = vscode.workspace.getConfiguration('agentLsp');
      const python = cfg.get<string>('server.pythonPath')!;
      const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
      const venvBin = path.join(ws, '.venv', 'bin');
      fs.mkdirSync(venvBin, { recursive: true });
      fs.symlinkSync(path.join(path.dirname(python), 'agent-lsp'), path.join(venvBin, 'agent-lsp')); // as `python -m venv .venv && pip install` leaves it
      const logged = serverLog().length;
      const before = a.client();
      try {
        await cfg.update('server.pythonPath', undefined, vscode.ConfigurationTarget.Global);
        await waitFor('the server started again', () => a.client() !== before && a.serverState() === 'running', 30000);
        await a.whenServerReady();
        const line = `Starting ${path.join(venvBin, 'agent-lsp')}  (found via ${ws}/.venv)`;
        await waitFor('the start in the log (VS Code writes it in batches)', () => serverLog().slice(logged).includes(line));
      } finally {
        const running = a.client();
        await cfg.update('server.pythonPath', python, vscode.ConfigurationTarget.Global);
        await waitFor('the server started with the setting again', () => a.client() !== running && a.serverState() === 'running', 30000);
        await a.whenServerReady();
        fs.rmSync(path.join(ws, '.venv'), { recursive: true, force: true });
      }
    },
  ],
  [
    "with no server setting and nothing in the workspace, agent-lsp is found beside the Python extension's interpreter, then where pipx and uv tool install it",
    async () => {
      const a = await api();
      await a.whenServerReady();
      const cfg = vscode.workspace.getConfiguration('agentLsp');
      const python = cfg.get<string>('server.pythonPath')!;
      const program = path.join(path.dirname(python), 'agent-lsp');
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'installers-'));
      const saved = { PATH: process.env.PATH, PIPX_HOME: process.env.PIPX_HOME, UV_TOOL_DIR: process.env.UV_TOOL_DIR };
      assert.ok(!fs.existsSync(path.join(os.homedir(), '.local', 'bin', 'agent-lsp')), '~/.local/bin/agent-lsp would be found first');
      // each installer's own environment, as `pipx install` / `uv tool install agent-language-server` leave it
      const pipxBin = path.join(home, 'pipx', 'venvs', 'agent-language-server', 'bin');
      const uvBin = path.join(home, 'uv', 'agent-language-server', 'bin');
      for (const bin of [pipxBin, uvBin]) {
        fs.mkdirSync(bin, { recursive: true });
        fs.symlinkSync(program, path.join(bin, 'agent-lsp'));
      }
      const startedVia = async (expected: string, change: () => Thenable<unknown>) => {
        const logged = serverLog().length;
        const before = a.client();
        await change();
        await waitFor('the server started again', () => a.client() !== before && a.serverState() === 'running', 30000);
        await a.whenServerReady();
        await waitFor(`the start via ${expected} in the log`, () => serverLog().slice(logged).includes(expected));
      };
      const pythonExtension = vscode.extensions.getExtension('ms-python.python');
      assert.ok(pythonExtension, 'the Python extension (its stand-in) is installed');
      const pythonApi = await pythonExtension.activate();
      try {
        process.env.PATH = '/usr/bin:/bin'; // (the extension host's environment: what the next start searches)
        pythonApi.selected = python; // the interpreter the user selected, in an environment that has agent-lsp
        await startedVia(`Starting ${program}  (found via the Python extension's interpreter)`, () => cfg.update('server.pythonPath', undefined, vscode.ConfigurationTarget.Global));
        pythonApi.selected = undefined; // none selected: the extension answers "python", which has no agent-lsp beside it
        process.env.PIPX_HOME = path.join(home, 'pipx');
        await startedVia(`Starting ${path.join(pipxBin, 'agent-lsp')}  (found via pipx)`, () => vscode.commands.executeCommand('agentLsp.restartServer'));
        delete process.env.PIPX_HOME;
        process.env.UV_TOOL_DIR = path.join(home, 'uv');
        await startedVia(`Starting ${path.join(uvBin, 'agent-lsp')}  (found via uv tool)`, () => vscode.commands.executeCommand('agentLsp.restartServer'));
      } finally {
        pythonApi.selected = undefined;
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) {
            delete process.env[name];
          } else {
            process.env[name] = value;
          }
        }
        const running = a.client();
        await cfg.update('server.pythonPath', python, vscode.ConfigurationTarget.Global);
        await waitFor('the server started with the setting again', () => a.client() !== running && a.serverState() === 'running', 30000);
        await a.whenServerReady();
        fs.rmSync(home, { recursive: true, force: true });
      }
    },
  ],
  [
    '"Show diff" after the file changed shows the edit as the session log has it, read-only',
    async () => {
      const a = await api();
      // hello.py was reverted since its edit: the file no longer holds it
      const tool = a.sessions.transcript.items.find((i) => i.kind === 'tool' && (i as any).name === 'edit_file') as any;
      await vscode.commands.executeCommand('agentLsp.showDiff', tool.callId);
      const tab = await waitFor('a diff tab', () => {
        const active = vscode.window.tabGroups.activeTabGroup.activeTab;
        return active?.input instanceof vscode.TabInputTextDiff ? active.input : null;
      });
      assert.equal(tab.original.scheme, 'agent-lsp-before');
      assert.equal(tab.modified.scheme, 'agent-lsp-before', 'the right side is a snapshot too, not the live file');
      assert.equal((await vscode.workspace.openTextDocument(tab.original)).getText(), 'print("hello world")\n');
      assert.equal((await vscode.workspace.openTextDocument(tab.modified)).getText(), 'print("hello agent")\n');
      assert.ok(!vscode.workspace.textDocuments.some((d) => d.isUntitled && d.isDirty), 'no dirty untitled patch');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    },
  ],
  [
    'a closed untitled buffer is no longer attached to the next message',
    async () => {
      const a = await api();
      const cfg = vscode.workspace.getConfiguration('agentLsp');
      await cfg.update('attachActiveEditor', true, vscode.ConfigurationTarget.Workspace);
      try {
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        const logged = serverLog().length;
        const draft = await vscode.workspace.openTextDocument({ content: 'a draft never saved', language: 'plaintext' });
        await vscode.window.showTextDocument(draft);
        await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
        await waitFor('the untitled editor to close', () => !vscode.window.visibleTextEditors.some((e) => e.document === draft));
        const turns = a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length;
        await a.send('anything attached?'); // reply 0 of the restarted server
        await idleAfter(a, turns + 1);
        const user = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'user') as any;
        assert.deepEqual(user.context, [], JSON.stringify(user.context));
        await new Promise((r) => setTimeout(r, 1000)); // VS Code writes the output channel's file in batches
        const since = serverLog().slice(logged);
        assert.ok(!/KeyError|Traceback|server error/.test(since), `the server logged an error after the close:\n${since}`);
      } finally {
        await cfg.update('attachActiveEditor', undefined, vscode.ConfigurationTarget.Workspace);
      }
    },
  ],
  [
    'a server that dies mid-turn: the turn ends interrupted at once with its text kept; "Restart and resume" brings it back',
    async () => {
      const a = await api();
      // A reply that streams, then waits: the turn is running when the server dies.
      // (`agentLsp.model` is not a registered setting, so the file is written directly.)
      const settingsFile = path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'settings.json');
      const original = fs.readFileSync(settingsFile, 'utf8');
      const settings = JSON.parse(original);
      settings['agentLsp.model'] = { ...settings['agentLsp.model'], script: [{ hang: 'partial before the crash' }] };
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      await waitFor('the new script in the settings', () =>
        JSON.stringify(vscode.workspace.getConfiguration('agentLsp').get('model')).includes('partial before the crash'),
      );
      try {
        const sessionId = a.sessions.sessionId;
        await a.send('a long task');
        await waitFor('the partial text', () => a.sessions.transcript.items.some((i) => i.kind === 'text' && (i as any).text === 'partial before the crash'));
        assert.equal(a.sessions.status, 'running');
        const server = (a.client() as any)._serverProcess as cp.ChildProcess;
        server.kill('SIGKILL');
        await waitFor('the turn to end interrupted', () => {
          const end = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'turn-end') as any;
          return end?.reason === 'interrupted' && a.sessions.status === 'idle';
        });
        assert.equal(a.serverState(), 'failed');
        assert.ok(a.sessions.transcript.items.some((i) => i.kind === 'text' && (i as any).text === 'partial before the crash'), 'the partial text stays');
        await waitFor('the panel to offer "Restart and resume"', () => a.panel.lastRendered?.status === 'idle');
        await assert.rejects(a.send('are you there?'), /not running: start it with "Agent: Restart Server"/);
        await vscode.commands.executeCommand('agentLsp.restartServer'); // what "Restart and resume" runs
        await a.whenServerReady();
        await waitFor('the session to be resumed', () => a.sessions.sessionId === sessionId && a.sessions.transcript.items.length > 0);
        assert.ok(a.sessions.transcript.items.some((i) => i.kind === 'text' && (i as any).text === 'partial before the crash'), 'the partial text is in the log');
        const end = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'turn-end') as any;
        assert.equal(end.reason, 'interrupted');
      } finally {
        fs.writeFileSync(settingsFile, original);
      }
    },
  ],
  [
    'a saved .mcp.json, skill and project hook take effect without a restart: the server list, an MCP tool card, the skill and the hook run',
    async () => {
      const a = await api();
      await a.whenServerReady();
      const ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
      const python = vscode.workspace.getConfiguration('agentLsp').get<string>('server.pythonPath')!;
      const asked: string[] = [];
      a.setPermissionHandler(async (p) => {
        asked.push(p.tool);
        return 'session';
      });
      const written = [path.join(ws, '.mcp.json'), path.join(ws, '.agents')];
      try {
        await vscode.commands.executeCommand('agentLsp.newSession');
        fs.mkdirSync(path.join(ws, '.agents', 'skills', 'greet'), { recursive: true });
        fs.writeFileSync(path.join(ws, '.agents', 'skills', 'greet', 'SKILL.md'), '---\nname: greet\ndescription: Greets the user\n---\nSay hello.\n');
        fs.writeFileSync(path.join(ws, '.agents', 'settings.json'), JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'true' }] }] } }));
        fs.writeFileSync(path.join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { time: { command: python, args: ['-m', 'mcp_server_time', '--local-timezone', 'UTC'] } } }));

        let servers: any[] = [];
        const ready = async () => {
          servers = await a.sessions.mcpServers();
          return servers.find((s) => s.name === 'time' && s.state === 'ready');
        };
        for (const start = Date.now(); !(await ready()); await new Promise((r) => setTimeout(r, 200))) {
          assert.ok(Date.now() - start < 60000, `the time server to be ready: ${JSON.stringify(servers)}`);
        }
        const shown = (await vscode.commands.executeCommand('agentLsp.showMcpServers')) as any[];
        await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
        assert.deepEqual(shown.map((s) => [s.name, s.state, s.toolCount, s.source]), [['time', 'ready', 2, 'project']]);

        await a.send('MCP-EXT what time is it?');
        await idleAfter(a, 1);
        const card = a.sessions.transcript.items.find((i) => i.kind === 'tool') as any;
        assert.equal(card.name, 'mcp__time__get_current_time');
        assert.equal(card.status, 'done', card.output);
        assert.match(card.output, /UTC/);
        const hook = a.sessions.transcript.items.find((i) => i.kind === 'hook') as any;
        assert.deepEqual([hook.event, hook.command, hook.outcome, hook.origin], ['UserPromptSubmit', 'true', 'allowed', '.agents/settings.json']);
        assert.deepEqual([...new Set(asked)].sort(), ['mcp__time__get_current_time', 'mcp_server', 'project_hooks']);

        const skills = await a.sessions.skills();
        assert.deepEqual(skills.map((s) => [s.name, s.source]), [['greet', 'project']]);
        await vscode.commands.executeCommand('agentLsp.pickSkill', 'greet', 'SKILL-EXT for me');
        await idleAfter(a, 2);
        const user = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'user') as any;
        assert.match(user.text, /The user invoked the skill "greet"[\s\S]*Say hello\.[\s\S]*SKILL-EXT for me/);
        await waitFor('the panel to render the answer', () => a.panel.lastRendered?.lastText === 'Greeted.');

        // the sub-agent's session of an earlier test is listed under its parent
        const nested = nestSessions(await a.sessions.list());
        const child = nested.findIndex((n) => n.depth === 1);
        assert.ok(child > 0, JSON.stringify(nested));
        assert.equal(nested[child - 1].session.sessionId, nested[child].session.parentSessionId);
      } finally {
        a.setPermissionHandler(null);
        for (const file of written) {
          fs.rmSync(file, { recursive: true, force: true });
        }
        }
      },
    ],
    [
    'a refused endpoint fails at once, naming its URL and the setting it comes from; "Check Model Connection" probes it',
    async () => {
      const a = await api();
      await a.whenServerReady();
      const folder = vscode.workspace.workspaceFolders![0].uri;
      const settingsFile = path.join(folder.fsPath, '.vscode', 'settings.json');
      const original = fs.readFileSync(settingsFile, 'utf8');
      const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
      const settings = JSON.parse(original);
      settings['agentLsp.model'] = { provider: 'openai', model: 'gpt-refused' };
      await vscode.workspace.getConfiguration('agentLsp').update('model.baseUrl', baseUrl, vscode.ConfigurationTarget.Global); // where the key may go: the user's setting only
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      await waitFor('the endpoint in the settings', () => vscode.workspace.getConfiguration('agentLsp').get<any>('model')?.model === 'gpt-refused');
      try {
        await vscode.commands.executeCommand('agentLsp.newSession');
        await a.send('is anyone there?');
        await idleAfter(a, 1);
        const kinds = a.sessions.transcript.items.map((i) => i.kind);
        assert.deepEqual(kinds, ['user', 'error', 'turn-end'], 'one error, no retry notices: nothing listens there');
        const error = a.sessions.transcript.items[1] as any;
        assert.equal(error.code, 'NETWORK');
        assert.ok(error.message.includes(baseUrl), error.message);
        assert.match(error.message, /model\.baseUrl/, 'it says which setting the endpoint comes from');
        const check = (await vscode.commands.executeCommand('agentLsp.checkModel')) as any;
        assert.equal(check.ok, false);
        assert.equal(check.url, baseUrl);
        assert.equal(check.error?.code, 'NETWORK');
      } finally {
        fs.writeFileSync(settingsFile, original);
        await vscode.workspace.getConfiguration('agentLsp').update('model.baseUrl', undefined, vscode.ConfigurationTarget.Global);
      }
    },
  ],
  [
    'ask mode: each edit waits in the panel with its diff; Deny leaves the file as it was, Allow once applies and saves it',
    async () => {
      const a = await api();
      a.setPermissionHandler(null); // the panel asks
      const { file, doc, settingsFile, original, settings } = await reviewSetup('ask.py');
      const oneEdit = settings['agentLsp.model'].script;
      settings['agentLsp.model'] = { ...settings['agentLsp.model'], script: [...oneEdit, ...oneEdit] }; // a turn denied, a turn allowed
      settings['agentLsp.edits.review'] = 'ask';
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      await waitFor('ask mode in the settings', () => vscode.workspace.getConfiguration('agentLsp').get('edits.review') === 'ask');
      try {
        await vscode.commands.executeCommand('agentLsp.newSession');
        await a.send('edit ask.py');
        let card = await waitFor('the edit waiting for approval', () => a.questions.card);
        assert.match(card.message, /The agent wants to write .*ask\.py/);
        assert.match(card.diff ?? '', /-a = 1\n\+a = 10\n/, card.diff); // drawn apart from the detail, coloured
        assert.deepEqual(card.answers.map((x) => x.label), ['Allow once', 'Deny']);
        assert.match(card.detail, /Every edit waits for your approval/);
        assert.match(a.statusBarText(), /waiting for you/);
        assert.equal(doc.getText(), 'a = 1\nb = 2\n', 'nothing is applied while it waits');
        a.questions.answer(card.id, 'deny'); // what the card's "Deny" button posts
        await idleAfter(a, 1);
        const denied = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'tool') as any;
        assert.equal(denied.error?.code, 'PERMISSION_DENIED');
        assert.equal(doc.getText(), 'a = 1\nb = 2\n');
        assert.equal(doc.isDirty, false);

        await a.send('edit ask.py again');
        card = await waitFor('the second edit waiting for approval', () => a.questions.card);
        a.questions.answer(card.id, 'once');
        await idleAfter(a, 2);
        assert.equal(doc.getText(), 'a = 10\nb = 20\n');
        await waitFor('the save', () => !doc.isDirty);
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 10\nb = 20\n');
        assert.deepEqual(a.review.pending, [], 'an approved edit does not wait for Keep / Undo');
      } finally {
        fs.writeFileSync(settingsFile, original);
      }
    },
  ],
  [
    'the retries of a step are one notice in the transcript, updated in place; then the answer',
    async () => {
      const a = await api();
      const folder = vscode.workspace.workspaceFolders![0].uri;
      const settingsFile = path.join(folder.fsPath, '.vscode', 'settings.json');
      const original = fs.readFileSync(settingsFile, 'utf8');
      const settings = JSON.parse(original);
      const script = [{ fail: 'OVERLOADED' }, { fail: 'OVERLOADED' }, { text: 'finally through' }];
      settings['agentLsp.model'] = { ...settings['agentLsp.model'], script };
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      await waitFor('the script in the settings', () => JSON.stringify(vscode.workspace.getConfiguration('agentLsp').get('model')).includes('finally through'));
      try {
        await vscode.commands.executeCommand('agentLsp.newSession');
        await a.send('are you busy?');
        await idleAfter(a, 1);
        const items = a.sessions.transcript.items;
        assert.deepEqual(items.map((i) => i.kind), ['user', 'notice', 'text', 'turn-end']);
        assert.match((items[1] as any).text, /^Retrying \(retry 2\).* after OVERLOADED/);
        assert.equal((items[2] as any).text, 'finally through');
        assert.equal((items[3] as any).reason, 'completed');
      } finally {
        fs.writeFileSync(settingsFile, original);
      }
    },
  ],
  [
    'review mode: the edit waits unsaved with Keep / Undo CodeLenses per hunk, per file and for all',
    async () => {
      const a = await api();
      const { file, doc, settingsFile, original, settings } = await reviewSetup('review.py');
      settings['agentLsp.edits.review'] = 'review';
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      await waitFor('review mode in the settings', () => vscode.workspace.getConfiguration('agentLsp').get('edits.review') === 'review');
      try {
        await a.send('edit review.py');
        await waitFor('two pending hunks', () => a.review.pending.length === 2);
        assert.equal(doc.getText(), 'a = 10\nb = 20\n');
        assert.equal(doc.isDirty, true, 'not saved while it waits for review');
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 1\nb = 2\n');
        const lenses = async () => ((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', file)) as vscode.CodeLens[]) ?? [];
        const titles = (await lenses()).map((l) => `${l.range.start.line}:${l.command?.title}`);
        assert.deepEqual(titles, ['0:Keep file (2 changes)', '0:Undo file', '0:Keep all', '0:Show diff', '0:Keep', '0:Undo', '1:Keep', '1:Undo']);
        const undo = (await lenses()).find((l) => l.range.start.line === 1 && l.command?.title === 'Undo')!;
        await vscode.commands.executeCommand(undo.command!.command, ...(undo.command!.arguments ?? []));
        await waitFor('the undo', () => doc.getText() === 'a = 10\nb = 2\n' && a.review.pending.length === 1);
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 1\nb = 2\n', 'a change still pending: not saved');
        const keepAll = (await lenses()).find((l) => l.command?.title === 'Keep all')!;
        await vscode.commands.executeCommand(keepAll.command!.command, ...(keepAll.command!.arguments ?? []));
        await waitFor('the save once nothing is pending', () => a.review.pending.length === 0 && !doc.isDirty);
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 10\nb = 2\n');
        assert.deepEqual(await lenses(), []);
      } finally {
        fs.writeFileSync(settingsFile, original);
      }
    },
  ],
  [
    'a change that lands while VS Code writes the file is on disk once the save ends (VS Code marks the document saved either way)',
    async () => {
      const folder = vscode.workspace.workspaceFolders![0].uri;
      const file = vscode.Uri.joinPath(folder, 'midsave.py');
      fs.writeFileSync(file.fsPath, 'n = 0\n');
      const doc = await vscode.workspace.openTextDocument(file);
      await vscode.window.showTextDocument(doc);
      const replace = (text: string) => {
        const edit = new vscode.WorkspaceEdit();
        edit.replace(file, new vscode.Range(0, 0, doc.lineCount, 0), text);
        return vscode.workspace.applyEdit(edit);
      };
      const lost: string[] = [];
      let landedDuringSave = 0;
      // The edit lands a few milliseconds into the save, as the undo of a reviewed hunk did under
      // auto-save: the delays span the time VS Code takes to write the file.
      // (VS Code refuses an edit while the will-save listeners run: those delays test nothing)
      for (let delay = 0; delay <= 40; delay += 4) {
        assert.ok(await replace(`n = ${delay}\n`));
        const newer = `n = ${delay} newer\n`;
        let landed: Thenable<boolean> = Promise.resolve(false);
        const once = vscode.workspace.onWillSaveTextDocument(() => {
          once.dispose();
          landed = new Promise((r) => setTimeout(r, delay)).then(() => replace(newer));
        });
        await doc.save();
        if (!(await landed)) {
          continue;
        }
        landedDuringSave += 1;
        await new Promise((r) => setTimeout(r, 150));
        await waitFor(`the save of ${newer.trim()} settled`, () => doc.isDirty || fs.readFileSync(file.fsPath, 'utf8') === newer, 1000).catch(() => undefined);
        const disk = fs.readFileSync(file.fsPath, 'utf8');
        if (!doc.isDirty && disk !== doc.getText()) {
          lost.push(`after ${delay} ms: disk ${JSON.stringify(disk)}, buffer ${JSON.stringify(doc.getText())} marked saved`);
        }
        if (doc.isDirty) {
          await doc.save();
        }
      }
      assert.ok(landedDuringSave >= 5, `edits that landed during a save: ${landedDuringSave}`);
      assert.deepEqual(lost, []);
    },
  ],
  [
    "review mode from the server's config file only: the edit waits unsaved, and its CodeLenses come back after a server restart",
    async () => {
      const a = await api();
      const { folder, file, doc, settingsFile, original, settings } = await reviewSetup('review2.py');
      const configFile = path.join(folder.fsPath, '..', 'review-config.toml');
      fs.writeFileSync(configFile, '[edits]\nreview = "review"\n');
      const cfg = vscode.workspace.getConfiguration('agentLsp');
      const env = cfg.inspect<Record<string, string>>('server.env')?.globalValue;
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      const before = a.client();
      await cfg.update('server.env', { ...(env ?? {}), AGENT_LSP_CONFIG: configFile }, vscode.ConfigurationTarget.Global); // a server.* change restarts the server
      try {
        await waitFor('the server restarted with the config file', () => a.client() && a.client() !== before && a.serverState() === 'running', 30000);
        await a.whenServerReady();
        assert.equal(vscode.workspace.getConfiguration('agentLsp').inspect('edits.review')?.workspaceValue, undefined, 'not set in VS Code');
        await a.send('edit review2.py');
        await waitFor('two pending hunks', () => a.review.pending.length === 2);
        assert.equal(doc.getText(), 'a = 10\nb = 20\n');
        assert.equal(doc.isDirty, true, 'not saved while it waits for review');
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 1\nb = 2\n');
        await new Promise((r) => setTimeout(r, 1500)); // longer than an auto-save delay
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 1\nb = 2\n', 'still not on disk a while later');

        await vscode.commands.executeCommand('agentLsp.restartServer');
        await waitFor('the pending hunks again after the restart', () => a.review.pending.length === 2, 30000);
        const lenses = async () => ((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', file)) as vscode.CodeLens[]) ?? [];
        const titles = (await lenses()).map((l) => `${l.range.start.line}:${l.command?.title}`);
        assert.deepEqual(titles, ['0:Keep file (2 changes)', '0:Undo file', '0:Keep all', '0:Show diff', '0:Keep', '0:Undo', '1:Keep', '1:Undo']);
        const undo = (await lenses()).find((l) => l.range.start.line === 1 && l.command?.title === 'Undo')!;
        await vscode.commands.executeCommand(undo.command!.command, ...(undo.command!.arguments ?? []));
        await waitFor('the undo', () => doc.getText() === 'a = 10\nb = 2\n' && a.review.pending.length === 1);
        const keepAll = (await lenses()).find((l) => l.command?.title === 'Keep all')!;
        await vscode.commands.executeCommand(keepAll.command!.command, ...(keepAll.command!.arguments ?? []));
        await waitFor('the save once nothing is pending', () => a.review.pending.length === 0 && !doc.isDirty);
        const buffer = doc.getText();
        assert.equal(fs.readFileSync(file.fsPath, 'utf8'), 'a = 10\nb = 2\n', `on disk (the buffer: ${JSON.stringify(buffer)}, dirty: ${doc.isDirty})`);
      } finally {
        fs.writeFileSync(settingsFile, original);
        await cfg.update('server.env', env, vscode.ConfigurationTarget.Global);
        fs.rmSync(configFile, { force: true });
      }
    },
  ],
  [
    "the language tool asks VS Code's own TypeScript: a rename is one edit of three files that one undo takes back; an edit that breaks a call reports the new error, " +
      'a clean edit reports no new problems, an edit of a file open in no tab reports its new error, a changed signature reports the broken call in a file never opened',
    async () => {
      const a = await api();
      await a.whenServerReady();
      a.setPermissionHandler(async () => 'session');
      const folder = vscode.workspace.workspaceFolders![0].uri;
      const dir = path.join(folder.fsPath, 'tsq');
      const sources: Record<string, string> = {
        'a.ts': 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n',
        'b.ts': "import { greet } from './a';\n\nexport const fromB = greet('b');\n",
        'c.ts': "import { greet } from './a';\n\nexport const fromC = greet('c');\n",
        'old.ts': "export const count: number = 'one';\n", // a problem that was there before
        'd.ts': 'export const total: number = 2;\n', // never opened in a tab
      };
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'commonjs', noEmit: true }, include: ['*.ts'] }));
      for (const [name, text] of Object.entries(sources)) {
        fs.writeFileSync(path.join(dir, name), text);
      }
      const settingsFile = path.join(folder.fsPath, '.vscode', 'settings.json');
      const original = fs.readFileSync(settingsFile, 'utf8');
      // no language servers of the agent's own: only VS Code can answer
      const settings = { ...JSON.parse(original), 'agentLsp.language': { enabled: true, discovery: false, waitSeconds: 3 } };
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
      const docs: Record<string, vscode.TextDocument> = {};
      try {
        await waitFor('the language settings', () => vscode.workspace.getConfiguration('agentLsp').get<any>('language')?.discovery === false);
        // VS Code's TypeScript checks the files open in editors
        for (const name of ['old.ts', 'c.ts', 'b.ts', 'a.ts']) {
          docs[name] = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(dir, name)));
          await vscode.window.showTextDocument(docs[name], { preview: false });
        }
        await waitFor("TypeScript's report on old.ts", () => vscode.languages.getDiagnostics(docs['old.ts'].uri).length > 0, 60000);
        await vscode.commands.executeCommand('agentLsp.newSession');

        // the Check command reports the folder's language servers beside the model
        const check = (await vscode.commands.executeCommand('agentLsp.checkModel')) as any;
        assert.equal(check.ok, true);
        assert.equal(check.language.editorFirst, true, "VS Code's features answer first");
        const listed = check.language.servers.filter((s: any) => s.workspaceUri === folder.toString());
        assert.deepEqual(
          listed.filter((s: any) => s.name === 'typescript-language-server').map((s: any) => [s.state, s.reason]),
          [['off', 'language.discovery is false: only the servers named in languageServers run']],
          JSON.stringify(listed),
        );

        await a.send('RENAME-TS greet to welcome');
        await idleAfter(a, 1);
        const renamed = a.sessions.transcript.items.find((i) => i.kind === 'tool') as any;
        assert.equal(renamed.name, 'language');
        assert.equal(renamed.status, 'done', JSON.stringify(renamed));
        for (const name of ['a.ts', 'b.ts', 'c.ts']) {
          assert.equal(docs[name].getText(), sources[name].replace(/greet/g, 'welcome'), name);
        }
        // one edit: one undo in a.ts takes it back in all three files
        await vscode.window.showTextDocument(docs['a.ts']);
        await vscode.commands.executeCommand('undo');
        await waitFor('the three files as they were', () => ['a.ts', 'b.ts', 'c.ts'].every((name) => docs[name].getText() === sources[name]));
        for (const name of ['a.ts', 'b.ts', 'c.ts']) {
          await docs[name].save();
        }

        await a.send('BREAK-TS call greet with a number');
        await idleAfter(a, 2);
        const edit = [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'tool') as any;
        assert.equal(edit.name, 'edit_file');
        assert.match(edit.output, /Problems after this change \(ts\): 1 new error:\n {2}tsq\/b\.ts:3:\d+: error: Argument of type 'number' is not assignable/, edit.output);
        assert.doesNotMatch(edit.output, /old\.ts/, 'the problem that was there before is not new');

        // TypeScript's problems of c.ts stay as they were (none): VS Code publishes nothing, TypeScript is asked
        const lastTool = () => [...a.sessions.transcript.items].reverse().find((i) => i.kind === 'tool') as any;
        await a.send('CLEAN-TS greet someone else');
        await idleAfter(a, 3);
        assert.equal(lastTool().name, 'edit_file');
        assert.match(lastTool().output, /No new problems \(ts\)\./, lastTool().output);
        assert.equal(docs['c.ts'].getText(), sources['c.ts'].replace("greet('c')", "greet('see')"));

        // d.ts is in no tab: VS Code's TypeScript would never check it
        const inTab = (name: string) => vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => (t.input as any)?.uri?.fsPath === path.join(dir, name)));
        assert.equal(inTab('d.ts'), false);
        await a.send('UNOPENED-TS make the total a string');
        await idleAfter(a, 4);
        assert.equal(lastTool().name, 'edit_file');
        assert.match(lastTool().output, /Problems after this change \(ts\): 1 new error:\n {2}tsq\/d\.ts:1:14: error: Type 'string' is not assignable to type 'number'/, lastTool().output);
        assert.equal(inTab('d.ts'), false, 'still in no tab');

        // e.ts calls greet and VS Code has never opened it: a changed signature still reports its broken call
        const eFile = path.join(dir, 'e.ts');
        fs.writeFileSync(eFile, "import { greet } from './a';\n\nexport const fromE = greet('e');\n");
        assert.equal(vscode.workspace.textDocuments.some((d) => d.uri.fsPath === eFile), false);
        await a.send('CALLER-TS give greet a second parameter');
        await idleAfter(a, 5);
        assert.equal(lastTool().name, 'edit_file');
        assert.match(lastTool().output, /tsq\/e\.ts:3:\d+: error: Expected 2 arguments, but got 1\./, lastTool().output);
        assert.doesNotMatch(lastTool().output, /not known/, 'e.ts was checked before the edit too');
        assert.equal(inTab('e.ts'), false, 'still in no tab');
      } finally {
        fs.writeFileSync(settingsFile, original);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  ],
];

export async function run(): Promise<void> {
  const resultFile = process.env.EXT_TEST_RESULT;
  const outcomes: Outcome[] = [];
  // EXT_TEST_ONLY: a part of some tests' names, to run those alone while working on them
  const only = process.env.EXT_TEST_ONLY;
  // EXT_BENCH: the language benchmark alone, its figures in the outcome
  const bench: [string, () => Promise<string[] | void>][] = [['the language benchmark', async () => languageBench(await api(), waitFor)]];
  const selected: [string, () => Promise<string[] | void>][] = process.env.EXT_BENCH ? bench : only ? tests.filter(([name]) => name.includes(only)) : tests;
  for (const [name, fn] of selected) {
    const start = Date.now();
    try {
      const figures = await fn();
      outcomes.push({ name, ok: true, ms: Date.now() - start, ...(figures ? { figures } : {}) });
    } catch (error) {
      outcomes.push({ name, ok: false, ms: Date.now() - start, error: error instanceof Error ? error.stack ?? error.message : String(error) });
      break; // later tests build on earlier ones
    }
  }
  const ok = outcomes.length === selected.length && selected.length > 0 && outcomes.every((o) => o.ok);
  if (resultFile) {
    fs.writeFileSync(resultFile, JSON.stringify({ ok, outcomes }, null, 2));
  }
}
