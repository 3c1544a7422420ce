// A turn that ends, or a question that waits, while the VS Code window does
// not have the focus: a notification says so, with a button to the panel
// (setting agentLsp.attention.notify, on by default). Nothing while the
// window has the focus: the panel shows it.
import * as vscode from 'vscode';
import { AttentionEvent, questionLine, turnEndLine } from './attentionLine';
import { toastText } from './toastText';

function wanted(): boolean {
  return !vscode.window.state.focused && vscode.workspace.getConfiguration('agentLsp').get<boolean>('attention.notify', true);
}

function tell(line: string): void {
  void vscode.window.showInformationMessage(toastText(line), 'Show Agent Panel').then((choice) => {
    if (choice) {
      void vscode.commands.executeCommand('agentLsp.focus');
    }
  });
}

/** After live session events: a turn that ended. */
export function attendEvents(events: readonly AttentionEvent[]): void {
  const line = turnEndLine(events);
  if (line && wanted()) {
    tell(line);
  }
}

/** As a permission question is asked. */
export function attendQuestion(title: string | undefined): void {
  if (wanted()) {
    tell(questionLine(title));
  }
}
