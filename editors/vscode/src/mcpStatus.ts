// "Agent: Show MCP Servers" (also in the panel's title menu): the workspace's
// MCP servers with their state, tool count and the reason one failed or waits.
// A server that waits for authorization (trust, or an OAuth sign-in) has an
// Authorize button (Enter on its row does the same); one signed in with OAuth
// has a Sign Out button.

import * as vscode from 'vscode';
import { McpServerAction, mcpAuthorizedMessage, mcpServerActions, mcpServerRow } from './mcp';
import { McpServerStatus, Request } from './protocol';

const BUTTONS: Record<McpServerAction, vscode.QuickInputButton> = {
  authorize: { iconPath: new vscode.ThemeIcon('key'), tooltip: 'Authorize' },
  logout: { iconPath: new vscode.ThemeIcon('sign-out'), tooltip: 'Sign Out' },
};

type Row = vscode.QuickPickItem & { server: McpServerStatus };

/** Show the servers in a quick pick; returns them (for tests and scripts). */
export async function showMcpServers(list: () => Promise<McpServerStatus[]>, request?: () => Request): Promise<McpServerStatus[]> {
  const servers = await list();
  const quickPick = vscode.window.createQuickPick<Row>();
  quickPick.title = 'MCP servers';
  quickPick.placeholder = servers.length
    ? 'MCP servers of this workspace (configured in config.toml, .mcp.json or the agentLsp settings)'
    : 'No MCP servers are configured (config.toml [mcpServers], .mcp.json, or the mcpServers setting)';
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  quickPick.items = servers.map((server) => ({
    ...mcpServerRow(server),
    server,
    buttons: request ? mcpServerActions(server).map((action) => BUTTONS[action]) : [],
  }));
  const act = (server: McpServerStatus, action: McpServerAction) => {
    quickPick.hide();
    if (request) {
      void runMcpServerAction(request(), server, action);
    }
  };
  quickPick.onDidAccept(() => {
    const server = quickPick.selectedItems[0]?.server;
    if (server && server.state === 'needs-authorization' && mcpServerActions(server).includes('authorize')) {
      act(server, 'authorize');
    } else {
      quickPick.hide();
    }
  });
  quickPick.onDidTriggerItemButton(({ item, button }) => act(item.server, button === BUTTONS.logout ? 'logout' : 'authorize'));
  quickPick.onDidHide(() => quickPick.dispose());
  quickPick.show();
  return servers;
}

/** agent/mcp/authorize or agent/mcp/logout for one server, with what came of it. */
export async function runMcpServerAction(request: Request, server: McpServerStatus, action: McpServerAction): Promise<McpServerStatus | undefined> {
  const params = { server: server.name, ...(server.workspaceUri ? { workspaceUri: server.workspaceUri } : {}) };
  try {
    if (action === 'logout') {
      const after = await request('agent/mcp/logout', params);
      void vscode.window.showInformationMessage(`Agent: signed out of the MCP server '${server.name}'.`);
      return after;
    }
    const title = server.authorization === 'oauth'
      ? `Agent: signing in to the MCP server '${server.name}': complete it in your browser…`
      : `Agent: MCP server '${server.name}': answer the trust question…`;
    const after = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title },
      () => request('agent/mcp/authorize', params),
    );
    const { ok, text } = mcpAuthorizedMessage(after);
    void (ok ? vscode.window.showInformationMessage(`Agent: ${text}`) : vscode.window.showWarningMessage(`Agent: ${text}`));
    return after;
  } catch (error) {
    void vscode.window.showErrorMessage(`Agent: could not ${action === 'logout' ? 'sign out of' : 'authorize'} '${server.name}': ${(error as Error).message}`);
    return undefined;
  }
}
