// "Show diff" for an agent edit: VS Code's diff editor between the text
// before and after the edit, both read-only snapshots (a virtual document
// scheme): the whole file when it still holds the edit (the text before is
// recovered from the tool's unified diff), else the lines around the edit as
// the session log's diff has them. Never an editable or untitled document.

import * as vscode from 'vscode';
import { diffSides, reverseApply } from './diff';
import { ToolItem } from './transcript';

export const BEFORE_SCHEME = 'agent-lsp-before';

export class BeforeContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  private shown = 0;

  /** A new URI each time: VS Code keeps a virtual document's first text for its URI. */
  put(id: string, path: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: BEFORE_SCHEME, path, query: `${id}:${++this.shown}` });
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

/** An edit's unified diff (one waiting for approval) in the diff editor: the lines it shows, before and after. */
export async function showUnifiedDiff(diff: string, before: BeforeContent): Promise<void> {
  const sides = diffSides(diff);
  const path = /^\+\+\+ (?:b\/)?(.+)$/m.exec(diff)?.[1]?.trim() || 'edit';
  if (!sides) {
    return;
  }
  const name = path.startsWith('/') ? path : `/${path}`;
  const left = before.put('ask:before', name, sides.before);
  const right = before.put('ask:after', name, sides.after);
  await vscode.commands.executeCommand('vscode.diff', left, right, `${path} (the agent's edit, waiting for your approval)`);
}

export async function showToolDiff(item: ToolItem, before: BeforeContent): Promise<void> {
  const meta = item.meta ?? {};
  const diff: string | undefined = meta.diff ?? meta.unifiedDiff ?? meta.patch;
  if (typeof diff !== 'string') {
    return;
  }
  const path = toolPath(item);
  const uri = path ? resolve(path) : null;
  let sides: { before: string; after: string } | null = null;
  if (uri) {
    try {
      const now = (await vscode.workspace.openTextDocument(uri)).getText();
      const original = reverseApply(now, diff);
      sides = original === null ? null : { before: original, after: now };
    } catch {
      // the file is gone (deleted or renamed since): the diff alone
    }
  }
  sides = sides ?? diffSides(diff);
  if (!sides) {
    return;
  }
  const shown = uri ? vscode.workspace.asRelativePath(uri) : path ?? 'file';
  const name = uri?.path ?? `/${shown}`;
  const left = before.put(`${item.key}:before`, name, sides.before);
  const right = before.put(`${item.key}:after`, name, sides.after);
  await vscode.commands.executeCommand('vscode.diff', left, right, `${shown} (agent edit, turn ${item.turn ?? '?'}, read-only)`);
}
