// The server's permission question (agent/permission), asked as a modal
// naming the exact command or path. Dismissing it denies.

import * as vscode from 'vscode';
import { PermissionAnswer, PermissionParams } from './protocol';
import { permissionQuestion } from './permissionQuestion';

const CHOICES: { label: string; answer: PermissionAnswer }[] = [
  { label: 'Allow once', answer: 'once' },
  { label: 'Allow for this session', answer: 'session' },
  { label: 'Always allow', answer: 'always' },
];

export async function askPermission(params: PermissionParams): Promise<PermissionAnswer> {
  const { message, detail } = permissionQuestion(params);
  const picked = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...CHOICES.map((c) => c.label));
  return CHOICES.find((c) => c.label === picked)?.answer ?? 'deny';
}
