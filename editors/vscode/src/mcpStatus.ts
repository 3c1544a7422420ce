// "Agent: Show MCP Servers" (also in the panel's title menu): the workspace's
// MCP servers with their state, tool count and the reason one failed or waits.

import * as vscode from 'vscode';
import { McpServerStatus, mcpServerRow } from './mcp';

/** Show the servers in a quick pick; returns them (for tests and scripts). */
export async function showMcpServers(list: () => Promise<McpServerStatus[]>): Promise<McpServerStatus[]> {
  const servers = await list();
  const quickPick = vscode.window.createQuickPick();
  quickPick.title = 'MCP servers';
  quickPick.placeholder = servers.length
    ? 'MCP servers of this workspace (configured in config.toml, .mcp.json or the agentLsp settings)'
    : 'No MCP servers are configured (config.toml [mcpServers], .mcp.json, or the mcpServers setting)';
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  quickPick.items = servers.map(mcpServerRow);
  quickPick.onDidAccept(() => quickPick.hide());
  quickPick.onDidHide(() => quickPick.dispose());
  quickPick.show();
  return servers;
}
