// Reviewing the agent's edits (the server setting edits.review = "review"):
// each pending hunk is highlighted in its editor with CodeLenses "Keep" /
// "Undo"; the first hunk of a file also offers "Keep file" / "Undo file" and
// "Keep all" (every session's pending hunks, in every file) and "Show diff"
// (VS Code's diff editor: the file before its pending changes, and now). A
// hover shows what a change replaced; where it only deleted lines, a note on
// the line says so. The hunks come from
// agent/review/list, asked again when a review/* event arrives, after a
// keep/undo, and (debounced) after the user edits a file that has some.

import * as vscode from 'vscode';
import { PendingHunkInfo, ReviewResolveParams, ReviewResolveResult, SessionEvent } from './protocol';
import type { BeforeContent } from './diffView';
import { deletedNote, replacedMarkdown, textBeforeHunks } from './reviewDiff';
import { ReviewFile, reviewFiles, reviewHeadline } from './reviewSummary';
import { toastText } from './toastText';
import type { Requester as ServerRequester } from './sessions';

type Requester = () => ServerRequester | null;

const REFRESH_AFTER_TYPING_MS = 300;

/** The CodeLenses of one document's pending hunks, in the order they are shown. */
export function reviewLenses(hunks: PendingHunkInfo[]): { line: number; title: string; command: string; argument: unknown }[] {
  const sorted = [...hunks].sort((a, b) => a.range.start.line - b.range.start.line);
  const out: { line: number; title: string; command: string; argument: unknown }[] = [];
  sorted.forEach((hunk, i) => {
    const line = hunk.range.start.line;
    if (i === 0) {
      if (sorted.length > 1) {
        const file = { sessionId: hunk.sessionId, uri: hunk.uri };
        out.push({ line, title: `Keep file (${sorted.length} changes)`, command: 'agentLsp.review.keepFile', argument: file });
        out.push({ line, title: 'Undo file', command: 'agentLsp.review.undoFile', argument: file });
      }
      out.push({ line, title: 'Keep all', command: 'agentLsp.review.keepAll', argument: undefined });
      out.push({ line, title: 'Show diff', command: 'agentLsp.review.diff', argument: { uri: hunk.uri } });
    }
    out.push({ line, title: 'Keep', command: 'agentLsp.review.keep', argument: hunk });
    out.push({ line, title: 'Undo', command: 'agentLsp.review.undo', argument: hunk });
  });
  return out;
}

export class ReviewController implements vscode.CodeLensProvider, vscode.Disposable {
  private hunks: PendingHunkInfo[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly highlight = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly deleted = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('gitDecoration.deletedResourceForeground'), fontStyle: 'italic' },
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.deletedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private typingTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly requester: Requester,
    private readonly before?: BeforeContent,
    /** Where the panel's summary of the changed files goes. */
    private readonly summary?: (message: { type: 'review'; headline: string; files: ReviewFile[] }) => void,
  ) {
    const register = (id: string, fn: (...args: any[]) => unknown) => this.disposables.push(vscode.commands.registerCommand(id, fn));
    register('agentLsp.review.keep', (hunk?: PendingHunkInfo) => this.resolveHunk('keep', hunk));
    register('agentLsp.review.undo', (hunk?: PendingHunkInfo) => this.resolveHunk('undo', hunk));
    register('agentLsp.review.keepFile', (file?: { sessionId: string; uri: string }) => this.resolveFile('keep', file));
    register('agentLsp.review.undoFile', (file?: { sessionId: string; uri: string }) => this.resolveFile('undo', file));
    register('agentLsp.review.keepAll', () => this.resolveAll('keep'));
    register('agentLsp.review.undoAll', () => this.resolveAll('undo'));
    register('agentLsp.review.diff', (file?: { uri: string }) => this.showDiff(file?.uri));
    this.disposables.push(
      this.changed,
      this.highlight,
      this.deleted,
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && this.of(e.document.uri).length) {
          clearTimeout(this.typingTimer);
          this.typingTimer = setTimeout(() => void this.refresh(), REFRESH_AFTER_TYPING_MS);
        }
      }),
    );
  }

  /** Every pending hunk, as last listed. */
  get pending(): readonly PendingHunkInfo[] {
    return this.hunks;
  }

  /** The session events that change what is pending. */
  onEvents(events: SessionEvent[]): void {
    if (events.some((e) => typeof e.type === 'string' && e.type.startsWith('review/'))) {
      void this.refresh();
    }
  }

  async refresh(): Promise<void> {
    const server = this.requester();
    let hunks: PendingHunkInfo[] = [];
    if (server) {
      try {
        hunks = (await server.request('agent/review/list', {})).hunks;
      } catch {
        hunks = []; // the server is gone: nothing can be kept or undone
      }
    }
    this.hunks = hunks;
    this.changed.fire();
    this.decorate();
    const files = reviewFiles(hunks, (uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri)));
    this.summary?.({ type: 'review', headline: files.length ? reviewHeadline(files) : '', files });
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    return reviewLenses(this.of(document.uri)).map(({ line, title, command, argument }) => {
      const at = new vscode.Range(line, 0, line, 0);
      return new vscode.CodeLens(at, { title, command, arguments: argument === undefined ? [] : [argument] });
    });
  }

  dispose(): void {
    clearTimeout(this.typingTimer);
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  private of(uri: vscode.Uri): PendingHunkInfo[] {
    const key = uri.toString();
    return this.hunks.filter((h) => vscode.Uri.parse(h.uri).toString() === key);
  }

  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const added: vscode.DecorationOptions[] = [];
      const deleted: vscode.DecorationOptions[] = [];
      for (const h of this.of(editor.document.uri)) {
        const hoverMessage = new vscode.MarkdownString(replacedMarkdown(h));
        const note = deletedNote(h);
        if (note) {
          // on the line above the deleted ones (the first line when they were at the top)
          const line = Math.max(h.range.start.line - 1, 0);
          deleted.push({ range: new vscode.Range(line, 0, line, 0), hoverMessage, renderOptions: { after: { contentText: note } } });
        } else {
          const last = Math.max(h.range.start.line, h.range.end.line - 1);
          added.push({ range: new vscode.Range(h.range.start.line, 0, last, 0), hoverMessage });
        }
      }
      editor.setDecorations(this.highlight, added);
      editor.setDecorations(this.deleted, deleted);
    }
  }

  /** VS Code's diff editor: the file before its pending changes (read-only), and the file now. */
  private async showDiff(uri?: string): Promise<void> {
    const target = uri ? vscode.Uri.parse(uri) : vscode.window.activeTextEditor?.document.uri;
    const hunks = target ? this.of(target) : [];
    if (!target || !hunks.length || !this.before) {
      void vscode.window.showInformationMessage('Agent: no agent change waits for review in this file.');
      return;
    }
    const document = await vscode.workspace.openTextDocument(target);
    const left = this.before.put(`review:${target.toString()}`, target.path, textBeforeHunks(document.getText(), hunks));
    const shown = vscode.workspace.asRelativePath(target);
    await vscode.commands.executeCommand('vscode.diff', left, target, `${shown}: agent changes waiting for review`);
  }

  /** The hunk of a lens, else the one under the cursor. */
  private hunkAt(hunk?: PendingHunkInfo): PendingHunkInfo | undefined {
    if (hunk?.hunkId) {
      return hunk;
    }
    const editor = vscode.window.activeTextEditor;
    const line = editor?.selection.active.line;
    return editor && line !== undefined
      ? this.of(editor.document.uri).find((h) => h.range.start.line <= line && line <= Math.max(h.range.start.line, h.range.end.line - 1))
      : undefined;
  }

  private async resolveHunk(action: 'keep' | 'undo', hunk?: PendingHunkInfo): Promise<ReviewResolveResult | undefined> {
    const target = this.hunkAt(hunk);
    if (!target) {
      void vscode.window.showInformationMessage('Agent: no agent change under the cursor.');
      return undefined;
    }
    return this.resolve({ sessionId: target.sessionId, hunkId: target.hunkId, action });
  }

  private async resolveFile(action: 'keep' | 'undo', file?: { sessionId: string; uri: string }): Promise<void> {
    const uri = file?.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    const sessions = new Set(this.hunks.filter((h) => h.uri === uri || vscode.Uri.parse(h.uri).toString() === uri).map((h) => h.sessionId));
    for (const sessionId of file ? [file.sessionId] : sessions) {
      await this.resolve({ sessionId, uri: uri!, action });
    }
  }

  private async resolveAll(action: 'keep' | 'undo'): Promise<void> {
    for (const sessionId of new Set(this.hunks.map((h) => h.sessionId))) {
      await this.resolve({ sessionId, all: true, action });
    }
  }

  private async resolve(params: ReviewResolveParams): Promise<ReviewResolveResult | undefined> {
    const server = this.requester();
    if (!server) {
      void vscode.window.showWarningMessage('Agent: the server is not running: start it with "Agent: Restart Server".');
      return undefined;
    }
    try {
      const result = await server.request('agent/review/resolve', params);
      if (result.skipped.length) {
        void vscode.window.showWarningMessage(toastText(`Agent: not undone: ${result.skipped[0].reason}`));
      }
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    } finally {
      await this.refresh();
    }
  }
}
