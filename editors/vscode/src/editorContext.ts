// What a message attaches from the editors: the editor the user last worked in
// (its file, or its selection), followed as editors change, close and select,
// and every @file mention that exists in a workspace folder.

import * as vscode from 'vscode';
import { parseMentions } from './input';
import { ContextItem, lineLabel } from './protocol';

export class EditorContext implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly disposables: vscode.Disposable[];

  /** `changed`: the label of what would be attached now ("src/a.ts:3-7"), null for nothing. */
  constructor(private readonly changed: (label: string | null) => void) {
    this.disposables = [
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor && editor.document.uri.scheme !== 'output') {
          this.editor = editor;
        }
        this.post();
      }),
      // A closed editor is no longer the one to attach (an untitled buffer
      // closed without saving is gone for good).
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        if (this.editor && !editors.includes(this.editor)) {
          this.editor = vscode.window.activeTextEditor;
          this.post();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (this.editor?.document === doc) {
          this.editor = vscode.window.activeTextEditor;
          this.post();
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor === this.editor) {
          this.post();
        }
      }),
    ];
  }

  /** The editor the user last worked in (not an output channel). */
  get lastEditor(): vscode.TextEditor | undefined {
    return this.editor;
  }

  /** An editor's file, or its selection when there is one. */
  itemOf(editor: vscode.TextEditor | undefined): ContextItem | null {
    if (!editor || (editor.document.uri.scheme !== 'file' && editor.document.uri.scheme !== 'untitled')) {
      return null;
    }
    const uri = editor.document.uri.toString();
    const sel = editor.selection;
    if (sel.isEmpty) {
      return { kind: 'file', uri };
    }
    return {
      kind: 'selection',
      uri,
      range: { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } },
      text: editor.document.getText(sel),
    };
  }

  /** Say what would be attached now. */
  post(): void {
    const item = this.itemOf(this.editor);
    let label: string | null = null;
    if (item) {
      label = vscode.workspace.asRelativePath(vscode.Uri.parse(item.uri));
      if (item.range) {
        label += `:${lineLabel(item.range)}`;
      }
    }
    this.changed(label);
  }

  /** The last editor (when `attach` and no `extra` is given) plus every @file mention that exists. */
  async contextFor(text: string, extra: ContextItem[], attach: boolean): Promise<ContextItem[]> {
    const items: ContextItem[] = [...extra];
    if (!extra.length && attach) {
      const active = this.itemOf(this.editor);
      if (active) {
        items.push(active);
      }
    }
    for (const mention of parseMentions(text)) {
      for (const folder of vscode.workspace.workspaceFolders ?? []) {
        const uri = vscode.Uri.joinPath(folder.uri, mention);
        try {
          const stat = await vscode.workspace.fs.stat(uri);
          if (stat.type & vscode.FileType.File && !items.some((i) => i.uri === uri.toString())) {
            items.push({ kind: 'file', uri: uri.toString() });
          }
          break;
        } catch {
          // not in this folder
        }
      }
    }
    return items;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
