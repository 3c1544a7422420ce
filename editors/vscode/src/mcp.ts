// MCP as the panel and the server list show it: a tool card names the server
// and its tool ("time › get_current_time"), and each server of agent/mcp/list
// is one line of state. No vscode import: the webview and the unit tests share it.

import { McpServerStatus } from './protocol';

export type McpServerAction = 'authorize' | 'logout';

/** What the user can do with a server from the list: authorize one that waits for it
 * (trust or an OAuth sign-in; an OAuth server may sign in again), sign out of one with tokens. */
export function mcpServerActions(server: McpServerStatus): McpServerAction[] {
  const actions: McpServerAction[] = [];
  if (server.authorization === 'oauth' || (server.authorization === 'trust' && server.state === 'needs-authorization')) {
    actions.push('authorize');
  }
  if (server.authorization === 'oauth' && server.signedIn) {
    actions.push('logout');
  }
  return actions;
}

/** The line the user reads after agent/mcp/authorize answered. */
export function mcpAuthorizedMessage(server: McpServerStatus): { ok: boolean; text: string } {
  if (server.state === 'ready') {
    return { ok: true, text: `MCP server '${server.name}' is ${mcpStateLabel(server)}.` };
  }
  return { ok: false, text: `MCP server '${server.name}': ${mcpStateLabel(server)}${server.reason ? ` (${server.reason})` : ''}` };
}

/** "mcp__time__get_current_time" -> "time › get_current_time"; other names as they are. */
export function mcpToolTitle(name: string): string {
  const match = /^mcp__(.+?)__(.+)$/.exec(name);
  return match ? `${match[1]} › ${match[2]}` : name;
}

/** "ready · 2 tools", "needs authorization", "failed". */
export function mcpStateLabel(server: McpServerStatus): string {
  if (server.state === 'ready') {
    const n = server.toolCount ?? 0;
    return `ready · ${n} tool${n === 1 ? '' : 's'}`;
  }
  return server.state === 'needs-authorization' ? 'needs authorization' : server.state;
}

/** The quick pick row of a server: its name, state and where it is configured; the reason or its tools below. */
export function mcpServerRow(server: McpServerStatus): { label: string; description: string; detail?: string } {
  const icon = server.state === 'ready' ? '$(check)' : server.state === 'starting' ? '$(loading~spin)' : server.state === 'failed' ? '$(error)' : server.state === 'needs-authorization' ? '$(shield)' : '$(circle-outline)';
  const where = [server.source, server.transport, server.restarts ? `${server.restarts} restart${server.restarts === 1 ? '' : 's'}` : ''].filter(Boolean).join(' · ');
  const detail = server.reason || (server.tools?.length ? `tools: ${server.tools.join(', ')}` : undefined);
  return { label: `${icon} ${server.name}`, description: `${mcpStateLabel(server)}${where ? ` · ${where}` : ''}`, ...(detail ? { detail } : {}) };
}
