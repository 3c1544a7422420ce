// The agent panel: a webview view in its own activity-bar container. The
// webview renders; everything it asks for is done here.

import * as vscode from 'vscode';
import type { ImageAttachment } from './images';
import { SendAction } from './input';
import { PermissionCard } from './permissionCard';
import { PermissionAnswer } from './protocol';
import type { ReviewFile } from './reviewSummary';
import { ViewMessage } from './sessions';
import { SlashItem } from './slashMenu';

/** Messages the webview posts. */
export type PanelRequest =
  | { type: 'ready' }
  | { type: 'send'; text: string; action: SendAction; images?: ImageAttachment[] }
  | { type: 'pickImage' }
  | { type: 'attachUris'; uris: string[] }
  | { type: 'loadImage'; file: string }
  | { type: 'openImage'; file: string }
  | { type: 'slashItems' }
  | { type: 'slash'; name: string; rest: string; text: string }
  | { type: 'cancel' }
  | { type: 'removeQueued'; messageId: string }
  | { type: 'revertTurn'; turn: number }
  | { type: 'showDiff'; key: string }
  | { type: 'showPermissionDiff'; id: number }
  | { type: 'review'; action: 'keep' | 'undo' | 'open'; uri?: string }
  | { type: 'openLink'; href: string }
  | { type: 'newSession' }
  | { type: 'resumeSession' }
  | { type: 'toggleAttach'; on: boolean }
  | { type: 'setWhileRunning'; mode: 'queue' | 'steer' }
  | { type: 'pickFile' }
  | { type: 'setPlanMode'; on: boolean }
  | { type: 'pickModel' }
  | { type: 'forkTurn'; turn: number }
  | { type: 'rewindTurn'; turn: number }
  | { type: 'editQueued'; messageId: string }
  | { type: 'moveQueued'; messageId: string; to: 'next-turn' | 'next-step' | 'now'; index?: number }
  | { type: 'pauseQueue'; paused: boolean }
  | { type: 'openSubagent'; sessionId: string }
  | { type: 'cancelSubagent'; sessionId: string }
  | { type: 'rendered'; items: number; lastText: string; status: string; actions?: string[] }
  | { type: 'restartServer' }
  | { type: 'copyCode'; text: string }
  | { type: 'insertCode'; text: string }
  | { type: 'setupModel' }
  | { type: 'answerPermission'; id: number; answer: PermissionAnswer }
  | { type: 'retryTurn'; turn: number | null }
  | { type: 'command'; command: 'agentLsp.setApiKey' | 'agentLsp.checkModel' | 'agentLsp.managePermissions' };

/** Panel-only state (not part of the transcript). */
export type PanelMessage =
  | ViewMessage
  | { type: 'prefs'; whileRunning: 'queue' | 'steer'; attach: boolean }
  | { type: 'context'; label: string | null }
  | { type: 'server'; state: 'starting' | 'running' | 'failed' | 'stopped'; message?: string; restart?: string }
  | { type: 'model'; label: string; demo: boolean; detail: string }
  | { type: 'insert'; text: string }
  | { type: 'focus' }
  | { type: 'permission'; card: PermissionCard | null }
  | { type: 'review'; headline: string; files: ReviewFile[] }
  | { type: 'slashItems'; items: SlashItem[]; loading: boolean }
  | { type: 'attachImage'; image: ImageAttachment }
  | { type: 'restoreImages'; images: ImageAttachment[] }
  | { type: 'imageData'; file: string; url?: string; error?: string };

/** What the webview last drew: its item count, last text, header status and
 * the labels of the buttons of its permission card and last failed turn. */
export interface Rendered {
  items: number;
  lastText: string;
  status: string;
  actions: string[];
}

function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) {
    out += chars[Math.floor(Math.random() * chars.length)];
  }
  return out;
}

export class AgentPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'agentLsp.panel';
  private view: vscode.WebviewView | null = null;
  private ready = false;
  /** Opened by the user: the caret goes to the input once the webview is loaded. */
  private focusOnReady = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** The last render report from the webview (tests and diagnostics read it). */
  lastRendered: Rendered | null = null;
  private readonly renderedEmitter = new vscode.EventEmitter<Rendered>();
  readonly onDidRender = this.renderedEmitter.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onRequest: (request: PanelRequest) => void,
  ) {}

  get visible(): boolean {
    return !!this.view?.visible;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = this.html(view.webview);
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: PanelRequest) => {
        if (message.type === 'ready') {
          this.ready = true;
          if (this.focusOnReady) {
            this.focusOnReady = false;
            this.post({ type: 'focus' });
          }
        }
        if (message.type === 'rendered') {
          this.lastRendered = { items: message.items, lastText: message.lastText, status: message.status, actions: message.actions ?? [] };
          this.renderedEmitter.fire(this.lastRendered);
          return;
        }
        this.onRequest(message);
      }),
      view.onDidDispose(() => {
        this.view = null;
        this.ready = false;
      }),
    );
  }

  /** Post to the webview; dropped while it is not loaded (it asks for a snapshot on load). */
  post(message: PanelMessage): void {
    if (this.view && this.ready) {
      void this.view.webview.postMessage(message);
    }
  }

  /** Show the panel without taking the focus from where the user types. */
  async show(): Promise<void> {
    if (this.view) {
      this.view.show(true);
    } else {
      await vscode.commands.executeCommand(`${AgentPanel.viewId}.focus`); // not drawn yet: only VS Code's command opens it
    }
  }

  /** Show the panel with the caret in its input. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${AgentPanel.viewId}.focus`);
    if (this.view && this.ready) {
      this.post({ type: 'focus' });
    } else {
      this.focusOnReady = true;
    }
  }

  private html(webview: vscode.Webview): string {
    const n = nonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${n}'`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`, // data: the images of the messages and the input
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Agent</title>
</head>
<body>
<header id="header">
  <span id="session-title">New session</span>
  <span id="meter" title="Context used by the last model call"><span id="meter-bar"><span id="meter-fill"></span></span><span id="meter-text"></span></span>
  <button id="model" class="link" title="Switch the model (and reasoning effort) of this session">model</button>
  <span id="status" class="idle">idle</span>
</header>
<div id="demo-banner" hidden><span id="demo-text"></span> <button id="setup-model">Set up a model…</button></div>
<div id="banner" hidden></div>
<div id="readonly" hidden><span id="readonly-text"></span> <button id="readonly-new" class="link">New session</button></div>
<main id="transcript" aria-live="polite"><div id="empty">Ask the agent to explain, change or fix something. It edits your open files directly (undo works), and you can steer it while it works.</div></main>
<button id="new-activity" hidden title="Scroll to the latest">↓ New activity</button>
<section id="review-summary" hidden></section>
<section id="permission" hidden></section>
<div id="working" hidden><span class="dot"></span> working… <span class="hint">Esc to stop</span></div>
<section id="queue" hidden></section>
<footer id="composer">
  <div id="context-row">
    <label id="attach-label" title="Attach the active editor's file and selection"><input type="checkbox" id="attach"> <span id="context-label">No active editor to attach</span></label>
    <button id="mention" class="link" title="Attach another file (@file)">@ file</button>
    <button id="attach-image" class="link" title="Attach an image (or paste or drop one into the input)">+ image</button>
    <label id="plan-label" title="Plan mode: the agent reads and plans, but edits and commands are refused"><input type="checkbox" id="plan-mode"> Plan mode</label>
  </div>
  <div id="slash-menu" role="listbox" aria-label="Commands and prompts" hidden></div>
  <div id="attachments" hidden></div>
  <textarea id="input" rows="3" aria-controls="slash-menu" placeholder="Ask the agent… (Enter to send, Shift+Enter for a new line, / for commands)"></textarea>
  <div id="actions">
    <span id="mode" hidden>
      <label title="Run as the next turn"><input type="radio" name="mode" value="queue"> Queue</label>
      <label title="Send into the running turn at its next step"><input type="radio" name="mode" value="steer"> Steer</label>
    </span>
    <span class="spacer"></span>
    <button id="cancel" title="Cancel the running turn (Escape)" hidden>Stop</button>
    <button id="send" title="Send (Enter)">Send</button>
  </div>
</footer>
<script nonce="${n}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.renderedEmitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
