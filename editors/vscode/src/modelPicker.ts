// The model picker of the panel header (and the "Agent: Switch Model"
// command): the models the server offers, then the reasoning effort; the
// choice is sent as agent/session/setModel and the transcript follows from
// the session/model event.

import * as vscode from 'vscode';
import { EFFORTS, modelPick } from './models';
import type { SessionSetModelParams } from './protocol';
import type { Requester } from './sessions';

/** What agent/session/setModel changes. */
export type ModelSwitch = Omit<SessionSetModelParams, 'sessionId'>;

/** The quick pick open now (tests pick from it the way a user does). */
export let openPick: vscode.QuickPick<vscode.QuickPickItem> | null = null;

async function pick<T extends vscode.QuickPickItem>(items: T[], title: string, placeholder: string): Promise<T | undefined> {
  const qp = vscode.window.createQuickPick<T>();
  qp.items = items;
  qp.title = title;
  qp.placeholder = placeholder;
  openPick = qp as unknown as vscode.QuickPick<vscode.QuickPickItem>;
  try {
    return await new Promise<T | undefined>((resolve) => {
      qp.onDidAccept(() => resolve(qp.activeItems[0] ?? qp.selectedItems[0])); // single-select: the focused item
      qp.onDidHide(() => resolve(undefined));
      qp.show();
    });
  } finally {
    openPick = null;
    qp.dispose();
  }
}

/** Ask the user for a model and effort; undefined when they dismiss either. */
export async function chooseModel(requester: Requester, workspaceUri: string | undefined, current: string | null): Promise<ModelSwitch | undefined> {
  const listed = await requester.request('agent/model/list', workspaceUri ? { workspaceUri } : {});
  if (listed.note) {
    void vscode.window.showWarningMessage(`Agent: ${listed.note}`);
  }
  const models = listed.models.map((choice) => ({ ...modelPick(choice, current), choice }));
  const model = await pick(models, 'Agent: Switch Model', 'The model for the next step of this session');
  if (!model) {
    return undefined;
  }
  const efforts = [{ label: 'default', description: "the endpoint's default effort", effort: null }, ...EFFORTS.map((e) => ({ label: e, description: '', effort: e }))];
  const effort = await pick(efforts, `Agent: Reasoning Effort for ${model.choice.model}`, 'OpenAI-compatible endpoints only');
  if (!effort) {
    return undefined;
  }
  return { provider: model.choice.provider, model: model.choice.model, effort: effort.effort };
}
