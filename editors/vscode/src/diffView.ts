// "Show diff" for an agent edit: VS Code's diff editor between the text
// before the edit (recovered from the tool's unified diff) and the file now.

import * as vscode from 'vscode';
import { reverseApply } from './diff';
import { ToolItem } from './transcript';

export const BEFORE_SCHEME = 'agent-lsp-before';

export class BeforeContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  put(id: string, path: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: BEFORE_SCHEME, path, query: id });
    this.texts.set(uri.toString(), text);
    return uri;
  }
}

function toolPath(item: ToolItem): string | null {
  const meta = item.meta ?? {};
  if (typeof meta.path === 'string') {
    return meta.path;
  }
  try {
    const args = JSON.parse(item.args);
    return typeof args?.path === 'string' ? args.path : null;
  } catch {
    return null;
  }
}

function resolve(path: string): vscode.Uri | null {
  if (path.startsWith('file:')) {
    return vscode.Uri.parse(path);
  }
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) {
    return vscode.Uri.file(path);
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? vscode.Uri.joinPath(folder.uri, path) : null;
}

export async function showToolDiff(item: ToolItem, before: BeforeContent): Promise<void> {
  const meta = item.meta ?? {};
  const diff: string | undefined = meta.diff ?? meta.unifiedDiff ?? meta.patch;
  if (typeof diff !== 'string') {
    return;
  }
  const path = toolPath(item);
  const uri = path ? resolve(path) : null;
  if (uri) {
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      const original = reverseApply(doc.getText(), diff);
      if (original !== null) {
        const left = before.put(item.key, uri.path, original);
        const title = `${vscode.workspace.asRelativePath(uri)} (agent edit, turn ${item.turn ?? '?'})`;
        await vscode.commands.executeCommand('vscode.diff', left, uri, title);
        return;
      }
    } catch {
      // the file is gone (deleted or renamed since): show the patch itself
    }
  }
  const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: diff });
  await vscode.window.showTextDocument(doc, { preview: true });
}
