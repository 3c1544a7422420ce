// A change that lands while VS Code is writing a document to disk can be lost:
// VS Code writes the text the save started from, then marks the document
// saved although the change made it newer, so it never saves the newer text
// and the disk keeps the older one. Seen with auto-save (afterDelay) and an
// agent edit, such as the undo of a reviewed hunk, landing a few milliseconds
// into the save. The guard notes the version each save starts from; when the
// save ends with a newer version not marked dirty and the disk differs from
// the buffer, it writes the buffer itself, in the document's encoding.

import * as vscode from 'vscode';

export class SaveGuard implements vscode.Disposable {
  /** uri -> the document version its running save started from */
  private readonly saving = new Map<string, number>();
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly log: (message: string) => void = () => undefined) {
    this.disposables = [
      vscode.workspace.onWillSaveTextDocument((e) => this.saving.set(e.document.uri.toString(), e.document.version)),
      vscode.workspace.onDidSaveTextDocument((doc) => void this.saved(doc)),
    ];
  }

  private async saved(doc: vscode.TextDocument): Promise<void> {
    const key = doc.uri.toString();
    const from = this.saving.get(key);
    this.saving.delete(key);
    if (from === undefined || doc.version === from || doc.isDirty) {
      return; // the usual case: what was saved is what the buffer holds, or VS Code knows it is not
    }
    try {
      const text = doc.getText();
      // (a save participant, such as format on save, also makes the version newer: then the disk already holds it)
      if ((await vscode.workspace.decode(await vscode.workspace.fs.readFile(doc.uri), { encoding: doc.encoding })) === text) {
        return;
      }
      if (doc.isDirty || doc.getText() !== text) {
        return; // changed again meanwhile: VS Code saves it as usual
      }
      await vscode.workspace.fs.writeFile(doc.uri, await vscode.workspace.encode(text, { encoding: doc.encoding }));
      this.log(`${vscode.workspace.asRelativePath(doc.uri)} changed while VS Code saved it; the newer text was written`);
    } catch (error) {
      this.log(`could not check ${vscode.workspace.asRelativePath(doc.uri)} after its save: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}
