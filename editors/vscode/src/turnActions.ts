// "Fork from here" and "Rewind to here" on a turn of the panel's transcript:
// the fork opens the new session; the rewind asks whether the rewound turns'
// file changes go too, then says what it did.

import * as vscode from 'vscode';
import type { SessionController } from './sessions';

export async function forkTurn(sessions: SessionController, turn: number): Promise<string> {
  const forked = await sessions.fork(turn);
  void vscode.window.showInformationMessage(`Agent: forked at turn ${turn}; the new session shares the history up to there.`);
  return forked;
}

/** `revertFiles` given: no question (tests, other extensions). */
export async function rewindTurn(sessions: SessionController, turn: number, revertFiles?: boolean): Promise<boolean> {
  if (revertFiles === undefined) {
    const history = 'Rewind';
    const files = 'Rewind and Revert Files';
    const answer = await vscode.window.showWarningMessage(
      `Rewind the conversation to before turn ${turn}?`,
      { modal: true, detail: 'The agent no longer sees that turn or what followed. "Rewind and Revert Files" also undoes the file changes of those turns.' },
      history,
      files,
    );
    if (!answer) {
      return false;
    }
    revertFiles = answer === files;
  }
  const result = await sessions.rewind(turn, revertFiles);
  const reverted = result.reverts.reduce((n, r) => n + r.reverted.length, 0);
  const skipped = result.reverts.reduce((n, r) => n + r.skipped.length, 0);
  const files = revertFiles ? `; ${reverted} file(s) reverted${skipped ? `, ${skipped} left alone (changed since)` : ''}` : '';
  void vscode.window.showInformationMessage(`Agent: rewound to before turn ${turn}${files}.`);
  return true;
}
