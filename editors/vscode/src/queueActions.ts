// The actions on a queued message in the panel: edit, move up/down, steer
// now, send now (remove is SessionController.removeQueued), and pausing the
// queue. Each is one server request; the queue redraws from the splice events.

import * as vscode from 'vscode';
import { userText } from './protocol';
import type { SessionController } from './sessions';

export async function editQueued(sessions: SessionController, messageId: string, text?: string): Promise<boolean> {
  const message = sessions.transcript.inbox.nextTurn.find((m) => m.id === messageId) ?? sessions.transcript.inbox.nextStep.find((m) => m.id === messageId);
  if (!message) {
    return false;
  }
  const value = text ?? (await vscode.window.showInputBox({ prompt: 'Edit the queued message', value: userText(message) }));
  return value ? sessions.editQueued(messageId, value) : false;
}
