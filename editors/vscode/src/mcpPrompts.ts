// MCP prompts as commands: the prompts of the workspace's ready MCP servers
// (agent/mcp/prompts), each argument asked in an input box (a required one
// cannot be left empty) unless it was typed already, then agent/mcp/prompt/run:
// the prompt's messages enter the shown session as the user's next message.
// "Agent: Run MCP Prompt" picks one in a quick pick; the panel's "/" menu
// (slashCommands.ts) runs one by name.

import * as vscode from 'vscode';
import { McpPromptInfo, MessageRef } from './protocol';
import { Requester } from './sessions';

export async function listMcpPrompts(requester: Requester, workspaceUri?: string): Promise<McpPromptInfo[]> {
  const { prompts } = await requester.request('agent/mcp/prompts', workspaceUri ? { workspaceUri } : {});
  return prompts;
}

export async function runMcpPrompt(requester: Requester, sessionId: () => Promise<string>, workspaceUri?: string): Promise<MessageRef | undefined> {
  const prompts = await listMcpPrompts(requester, workspaceUri);
  if (!prompts.length) {
    void vscode.window.showInformationMessage('Agent: no ready MCP server of this workspace offers prompts.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    prompts.map((prompt) => ({ label: `${prompt.server}:${prompt.name}`, detail: prompt.description ?? undefined, prompt })),
    { title: 'Run an MCP prompt', matchOnDetail: true },
  );
  return picked ? runPrompt(requester, picked.prompt, {}, sessionId) : undefined;
}

/** Run `prompt` with the arguments `given`: with none given, each argument is
 * asked; otherwise only the required ones still missing. Undefined when the
 * user dismissed a question. */
export async function runPrompt(requester: Requester, prompt: McpPromptInfo, given: Record<string, string>, sessionId: () => Promise<string>): Promise<MessageRef | undefined> {
  const args = await askArguments(prompt, given);
  if (!args) {
    return undefined;
  }
  const params = { server: prompt.server, name: prompt.name, arguments: args, sessionId: await sessionId() };
  return requester.request('agent/mcp/prompt/run', params);
}

async function askArguments(prompt: McpPromptInfo, given: Record<string, string>): Promise<Record<string, string> | undefined> {
  const args = { ...given };
  const askAll = Object.keys(given).length === 0;
  for (const arg of prompt.arguments ?? []) {
    if (args[arg.name] || !(askAll || arg.required)) {
      continue;
    }
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
