// Edit -> tool result with fresh problems through VS Code's own TypeScript (the
// editor path of agent/languageQuery), in the real extension host. Prints
// figures; asserts only that every edit's problems were known.
//
//   EXT_BENCH=1 node scripts/vscode_run.mjs exttest   (after npm run build && npm run compile-exttest)
//
// Three TypeScript files open in tabs; the scripted model makes 18 edits of
// a.ts that in turn break the two callers (b.ts, c.ts), fix them, and change a
// comment only (problems as they were). The figure is each edit_file call as
// the session log timed it (tool/call -> tool/result: the edit applied in
// the buffer, VS Code's TypeScript asked before and after, the problems
// compared), and the same edits with the language features off (reference).

import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { AgentLspApi } from '../src/extension';

export const BENCH_EDITS = 18;

export const BENCH_SOURCES: Record<string, string> = {
  'a.ts': '// the sum\nexport function total(values: number[]): number {\n  return values.reduce((s, v) => s + v, 0);\n}\n',
  'b.ts': "import { total } from './a';\n\nexport const fromB = total([1, 2]);\n",
  'c.ts': "import { total } from './a';\n\nexport const fromC = total([3]);\n",
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

function summary(values: number[]): string {
  const sorted = [...values].sort((x, y) => x - y);
  return `median ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms (${values.length})`;
}

interface Timed {
  ms: number;
  text: string;
  waitedMs?: number;
}

async function editTimes(a: AgentLspApi, sessionId: string): Promise<Timed[]> {
  const answer = (await a.client()!.sendRequest('agent/session/replay', { sessionId, limit: 1000 })) as any;
  const started = new Map<string, number>();
  const out: Timed[] = [];
  for (const e of answer.events as any[]) {
    if (e.type === 'tool/call') {
      started.set(e.data.callId, e.time);
    }
    if (e.type === 'tool/result' && e.data.name === 'edit_file') {
      const text = (e.data.message.content as any[]).map((b) => b.text ?? '').join('');
      out.push({ ms: e.time - started.get(e.data.callId)!, text, waitedMs: e.data.meta?.problems?.waitedMs });
    }
  }
  return out;
}

/** The benchmark; its figures, one per line. */
export async function languageBench(
  a: AgentLspApi,
  waitFor: (what: string, probe: () => unknown, timeoutMs?: number) => Promise<unknown>,
): Promise<string[]> {
  await a.whenServerReady();
  a.setPermissionHandler(async () => 'session');
  const folder = vscode.workspace.workspaceFolders![0].uri;
  const dir = path.join(folder.fsPath, 'bench');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'commonjs', noEmit: true }, include: ['*.ts'] }));
  for (const [name, text] of Object.entries(BENCH_SOURCES)) {
    fs.writeFileSync(path.join(dir, name), text);
  }
  const settingsFile = path.join(folder.fsPath, '.vscode', 'settings.json');
  const original = fs.readFileSync(settingsFile, 'utf8');
  const lines: string[] = [];
  const setLanguage = async (language: Record<string, unknown>) => {
    fs.writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(original), 'agentLsp.language': language }, null, 2));
    await waitFor('the language settings', () => vscode.workspace.getConfiguration('agentLsp').get<any>('language')?.enabled === language.enabled);
  };
  try {
    await setLanguage({ enabled: true, discovery: false, waitSeconds: 5 });
    for (const name of ['c.ts', 'b.ts', 'a.ts']) {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(dir, name))), { preview: false });
    }
    // warm: the TypeScript server has loaded the project (its start is not what is measured)
    await vscode.commands.executeCommand('typescript.tsserverRequest', 'semanticDiagnosticsSync', { file: vscode.Uri.file(path.join(dir, 'a.ts')) });
    for (const [label, prompt, language] of [
      ["VS Code's TypeScript", 'BENCH-TS', { enabled: true, discovery: false, waitSeconds: 5 }],
      ['no language servers', 'BENCH-OFF', { enabled: false }],
    ] as const) {
      await setLanguage(language);
      await vscode.commands.executeCommand('agentLsp.newSession');
      const turns = a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length;
      const { sessionId } = await a.send(prompt);
      await waitFor('the turn to end', () => a.sessions.transcript.items.filter((i) => i.kind === 'turn-end').length > turns, 120000);
      await waitFor('status idle', () => a.sessions.status === 'idle');
      const times = await editTimes(a, sessionId);
      assert.equal(times.length, BENCH_EDITS, `${label}: ${JSON.stringify(times)}`);
      if (language.enabled) {
        const unknown = times.filter((t) => /are unknown/.test(t.text));
        assert.equal(unknown.length, 0, unknown.map((t) => t.text).join('\n'));
        const kinds = ['break', 'fix', 'clean'];
        for (const [k, kind] of kinds.entries()) {
          const these = times.filter((_, i) => i % 3 === k);
          lines.push(`${label}, ${kind} edits: tool/call -> tool/result ${summary(these.map((t) => t.ms))}; waiting for the problems ${summary(these.map((t) => t.waitedMs ?? 0))}`);
        }
      } else {
        lines.push(`${label}: tool/call -> tool/result ${summary(times.map((t) => t.ms))}`);
      }
    }
  } finally {
    fs.writeFileSync(settingsFile, original);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
