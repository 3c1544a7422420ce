// The language servers of each folder, for the Check command's report: which
// the agent runs itself, their state and why (agent/language/status, the same
// list `agent-lsp config show` prints), and whether VS Code's own language
// features answer first. No vscode import, so it is unit tested.

import type { LanguageServerStatus, LanguageStatusResult } from './protocol';

const STATE: Record<LanguageServerStatus['state'], string> = {
  running: 'running',
  found: 'used',
  'not-found': 'not used',
  'other-serves': 'not used',
  failed: 'failed',
  off: 'off',
};

/** The report's lines; `folderName` names a folder by its URI. */
export function languageStatusLines(status: LanguageStatusResult, folderName: (uri: string) => string): string[] {
  const lines = [
    status.editorFirst
      ? "Language servers: VS Code's own language features answer the agent first (TypeScript and JavaScript files are " +
        "checked by VS Code's TypeScript); the agent's own servers below answer for the files VS Code has none for."
      : 'Language servers: the agent asks its own servers, below.',
  ];
  const folders = new Map<string, LanguageServerStatus[]>();
  for (const server of status.servers) {
    folders.set(server.workspaceUri, [...(folders.get(server.workspaceUri) ?? []), server]);
  }
  if (folders.size === 0) {
    lines.push('  none known (no folder is open)');
  }
  for (const [uri, servers] of folders) {
    lines.push(`  ${folderName(uri)}`);
    const width = Math.max(...servers.map((s) => s.name.length));
    const stateWidth = Math.max(...servers.map((s) => STATE[s.state].length));
    for (const s of servers) {
      const source = s.source === 'settings' ? ', from the settings' : '';
      const sandbox = s.sandbox ? `; ${s.sandbox}` : '';
      lines.push(`    ${s.name.padEnd(width)}  ${STATE[s.state].padEnd(stateWidth)}  ${s.reason}${sandbox} (${s.filetypes.join(', ')}: ${s.command}${source})`);
    }
  }
  return lines;
}
