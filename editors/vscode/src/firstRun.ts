// First run: finding an installed agent-lsp the user did not configure (the
// Python extension's interpreter), choosing the program by hand when none is
// found, and setting up a model when none is configured (the server then
// answers with its built-in scripted demo model).

import * as vscode from 'vscode';
import { ModelInfoResult } from './protocol';

export const DEMO_BANNER = 'No model is configured: the built-in demo model answers (scripted replies, no AI).';

/** The header's label for the model in use. */
export function modelLabel(info: ModelInfoResult): string {
  return info.demo ? 'demo model' : info.provider === 'scripted' ? 'scripted' : info.model;
}

/** The interpreter the Python extension selected for `folder`, if that extension is installed. */
export async function pythonExtensionInterpreter(folder: vscode.Uri | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) {
    return undefined;
  }
  try {
    const api: any = extension.isActive ? extension.exports : await Promise.race([extension.activate(), new Promise((r) => setTimeout(r, 5000))]);
    const env = api?.environments?.getActiveEnvironmentPath?.(folder);
    if (typeof env?.path === 'string') {
      return env.path;
    }
    const details = api?.settings?.getExecutionDetails?.(folder);
    return Array.isArray(details?.execCommand) ? details.execCommand[0] : undefined;
  } catch {
    return undefined; // its API changed or it failed: the other places are still searched
  }
}

/** A file picker for the agent-lsp program; the choice goes to agentLsp.server.path. */
export async function chooseServerProgram(): Promise<boolean> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Choose the agent-lsp program',
    openLabel: 'Use this agent-lsp',
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
  });
  if (!picked?.length) {
    return false;
  }
  await vscode.workspace.getConfiguration('agentLsp').update('server.path', picked[0].fsPath, vscode.ConfigurationTarget.Global);
  return true;
}

/** "Set up a model": a stored API key, a local OpenAI-compatible server, or the settings. */
export async function setupModel(): Promise<void> {
  const choice = await vscode.window.showQuickPick(
    [
      { label: 'Set API Key…', detail: 'OpenAI or Anthropic: the key is kept in VS Code\'s secret storage', id: 'key' },
      { label: 'Use a local server…', detail: 'Ollama, LM Studio, llama.cpp, vLLM: an OpenAI-compatible endpoint and a model name', id: 'local' },
      { label: 'Open the model settings', detail: 'agentLsp.model: provider, model, baseUrl, …', id: 'settings' },
    ],
    { placeHolder: 'Set up the model the agent uses' },
  );
  if (choice?.id === 'key') {
    await vscode.commands.executeCommand('agentLsp.setApiKey');
  } else if (choice?.id === 'local') {
    const baseUrl = await vscode.window.showInputBox({ prompt: 'The endpoint (OpenAI-compatible)', value: 'http://localhost:11434/v1', ignoreFocusOut: true });
    if (!baseUrl) {
      return;
    }
    const model = await vscode.window.showInputBox({ prompt: 'The model name, as the server knows it', placeHolder: 'qwen2.5-coder:14b', ignoreFocusOut: true });
    if (!model) {
      return;
    }
    const config = vscode.workspace.getConfiguration('agentLsp');
    await config.update('model.provider', 'openai', vscode.ConfigurationTarget.Global);
    await config.update('model.baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
    await config.update('model.model', model, vscode.ConfigurationTarget.Global);
  } else if (choice?.id === 'settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'agentLsp.model');
  }
}
