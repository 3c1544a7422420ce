// "Agent: Run MCP Prompt": the prompts of the workspace's ready MCP servers
// (agent/mcp/prompts) in a quick pick, each argument asked in an input box
// (a required one cannot be left empty), then agent/mcp/prompt/run: the
// prompt's messages enter the shown session as the user's next message.

import * as vscode from 'vscode';
import { McpPromptInfo, McpPromptsResult, MessageRef, Methods } from './protocol';
import { Requester } from './sessions';

export async function runMcpPrompt(requester: Requester, sessionId: () => Promise<string>, workspaceUri?: string): Promise<MessageRef | undefined> {
  const { prompts } = await requester.request<McpPromptsResult>(Methods.mcpPrompts, workspaceUri ? { workspaceUri } : {});
  if (!prompts.length) {
    void vscode.window.showInformationMessage('Agent: no ready MCP server of this workspace offers prompts.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    prompts.map((prompt) => ({ label: `${prompt.server}:${prompt.name}`, detail: prompt.description ?? undefined, prompt })),
    { title: 'Run an MCP prompt', matchOnDetail: true },
  );
  if (!picked) {
    return undefined;
  }
  const args = await askArguments(picked.prompt);
  if (!args) {
    return undefined;
  }
  const params = { server: picked.prompt.server, name: picked.prompt.name, arguments: args, sessionId: await sessionId() };
  return requester.request<MessageRef>(Methods.mcpPromptRun, params);
}

async function askArguments(prompt: McpPromptInfo): Promise<Record<string, string> | undefined> {
  const args: Record<string, string> = {};
  for (const arg of prompt.arguments ?? []) {
    const value = await vscode.window.showInputBox({
      title: `${prompt.server}:${prompt.name}: ${arg.name}${arg.required ? '' : ' (optional)'}`,
      prompt: arg.description ?? undefined,
      ignoreFocusOut: true,
      validateInput: (text) => (arg.required && !text ? `${arg.name} is required` : undefined),
    });
    if (value === undefined) {
      return undefined;
    }
    if (value) {
      args[arg.name] = value;
    }
  }
  return args;
}
