// The server's permission question (agent/permission), asked as a modal
// naming the exact command or path, with only the answers the server honours
// (a command it always confirms has no "Always allow"). Deny is the dialog's
// close button, so Escape or closing it denies too.

import * as vscode from 'vscode';
import { PermissionAnswer, PermissionParams } from './protocol';
import { permissionQuestion } from './permissionQuestion';

interface Choice extends vscode.MessageItem {
  answer: PermissionAnswer;
}

const CHOICES: Choice[] = [
  { title: 'Allow once', answer: 'once' },
  { title: 'Allow for this session', answer: 'session' },
  { title: 'Always allow', answer: 'always' },
  { title: 'Deny', answer: 'deny', isCloseAffordance: true },
];

export async function askPermission(params: PermissionParams): Promise<PermissionAnswer> {
  const { message, detail, answers } = permissionQuestion(params);
  const choices = CHOICES.filter((c) => answers.includes(c.answer));
  const picked = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...choices);
  return picked?.answer ?? 'deny';
}
