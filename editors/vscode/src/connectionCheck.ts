// "Agent: Check Model and Language Servers": one tiny real request to the
// configured model through the server (agent/model/check), and what to do
// when it fails; and the language servers of each folder
// (agent/language/status), in the "Agent: Check" output. Model failures
// name, as data, the setting to change (`setting`): the key is this
// extension's own "Set API Key…" command (VS Code users have no model.apiKey
// to edit), a settings key is one of agentLsp.model.*, an environment
// variable is set where VS Code starts the server.

import * as vscode from 'vscode';
import { languageStatusLines } from './languageStatus';
import { LanguageStatusResult, LlmFailure, ModelCheckResult, Request } from './protocol';
import { toastText } from './toastText';

/** A model failure as the server reports it (agent/model/check, agent/error). */
export type ModelFailure = Partial<LlmFailure>;

export const SET_API_KEY = 'Set API Key…';
export const OPEN_SETTINGS = 'Open Settings';

/** The fix to offer for a failure: [button label, what it does]. */
export function fixFor(failure: ModelFailure): { label: string; run: () => Thenable<unknown> } | null {
  if (failure.code === 'AUTH') {
    return { label: SET_API_KEY, run: () => vscode.commands.executeCommand('agentLsp.setApiKey') };
  }
  const setting = failure.setting;
  if (setting?.startsWith('model.')) {
    return { label: OPEN_SETTINGS, run: () => vscode.commands.executeCommand('workbench.action.openSettings', `agentLsp.${setting}`) };
  }
  if (setting) {
    return { label: OPEN_SETTINGS, run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'agentLsp.server.env') };
  }
  return null;
}

/** The sentence saying what to change, in this editor's words. */
export function fixText(failure: ModelFailure): string {
  if (failure.code === 'AUTH') {
    return 'Run "Agent: Set API Key…" to store the key.';
  }
  if (failure.setting?.startsWith('model.')) {
    return `Change the setting agentLsp.${failure.setting}.`;
  }
  if (failure.setting) {
    return `Change ${failure.setting} in agentLsp.server.env or the environment VS Code starts with.`;
  }
  return '';
}

/** Show a failure with its fix as the button. */
export async function showFailure(prefix: string, failure: ModelFailure, extra: string[] = []): Promise<string | undefined> {
  const fix = fixFor(failure);
  const text = [`${prefix}: ${failure.code ?? 'error'}: ${failure.message ?? ''}`, fixText(failure)].filter(Boolean).join(' ');
  const choice = await vscode.window.showErrorMessage(toastText(text), ...(fix ? [fix.label] : []), ...extra);
  if (fix && choice === fix.label) {
    await fix.run();
  }
  return choice;
}

/** What "Agent: Check Model and Language Servers" found. */
export type CheckResult = ModelCheckResult & { language?: LanguageStatusResult };

let report: vscode.OutputChannel | undefined;

/** The model line of the report. */
function modelLine(result: ModelCheckResult, what: string): string {
  if (result.ok) {
    return `Model: ${what} answered in ${result.latencyMs ?? '?'} ms.`;
  }
  const failure: ModelFailure = result.error ?? {};
  return [`Model: ${what} failed: ${failure.code ?? 'error'}: ${failure.message ?? ''}`, fixText(failure)].filter(Boolean).join(' ');
}

function folderName(uri: string): string {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(uri));
  return folder ? `${folder.name} (${folder.uri.fsPath})` : vscode.Uri.parse(uri).fsPath;
}

/** The model connection (one tiny real request) and the language servers of each folder, in the "Agent: Check" output. */
export async function checkModel(request: Request, workspaceUri: string | undefined): Promise<CheckResult> {
  const [result, language] = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Agent: checking the model connection and the language servers…' },
    () => Promise.all([
      request('agent/model/check', { workspaceUri }),
      Promise.resolve(request('agent/language/status', {})).catch((error: unknown) => error instanceof Error ? error : new Error(String(error))),
    ]),
  );
  const what = `${result.provider ?? '?'} ${result.model ?? '?'}${result.url ? ` at ${result.url}` : ''}`;
  report ??= vscode.window.createOutputChannel('Agent: Check');
  report.clear();
  report.appendLine(modelLine(result, what));
  report.appendLine('');
  for (const line of language instanceof Error ? [`Language servers: the server could not say: ${language.message}`] : languageStatusLines(language, folderName)) {
    report.appendLine(line);
  }
  report.show(true);
  if (result.ok) {
    void vscode.window.showInformationMessage(`Agent: ${what} answered in ${result.latencyMs ?? '?'} ms.`);
  } else {
    void showFailure(`Agent: ${what} failed`, result.error ?? {});
  }
  return language instanceof Error ? result : { ...result, language };
}
