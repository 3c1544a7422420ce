// Activation: wires the panel, the session, the server's life
// (serverLifecycle.ts), the panel's requests (panelRequests.ts), the commands
// (commands.ts) and the status bar together. The server does the work; this
// stays thin.

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { registerCommands } from './commands';
import { BEFORE_SCHEME, BeforeContent } from './diffView';
import { EditorContext } from './editorContext';
import { ImageAttachment, messageContent, resentContent } from './images';
import { SendAction, WhileRunning, chooseSendAction } from './input';
import { markdownToPlain } from './markdown';
import { openPick } from './modelPicker';
import { AgentPanel } from './panel';
import { handlePanelRequest } from './panelRequests';
import { PermissionQuestions } from './permissionCard';
import { AgentStatus, ContextItem, MessageRef, PermissionAnswer, PermissionParams, RevertOutcome } from './protocol';
import { ReviewController } from './review';
import { SaveGuard } from './saveGuard';
import { AgentServer, ServerState, message } from './serverLifecycle';
import { HeldRefresh } from './heldRefresh';
import { heldNotice, sessionInUse } from './sessionLock';
import { SessionController } from './sessions';
import { SlashCommands } from './slashCommands';
import { TurnEndItem, lastAssistantText } from './transcript';

/** What the extension exports (used by the extension-host tests and by other extensions). */
export interface AgentLspApi {
  readonly sessions: SessionController;
  /** The agent's edits waiting for Keep / Undo (edits.review = "review"). */
  readonly review: ReviewController;
  readonly panel: AgentPanel;
  /** The permission questions waiting in the panel (its buttons answer through `answer`). */
  readonly questions: PermissionQuestions;
  /** The status bar item's text, e.g. "$(bell-dot) Agent: waiting for you". */
  statusBarText(): string;
  serverState(): ServerState;
  /** Resolves once the server is running (or rejects when it failed to start). */
  whenServerReady(): Promise<void>;
  client(): LanguageClient | null;
  send(text: string, action?: SendAction): Promise<{ sessionId: string; messageId: string }>;
  /** Replace the permission prompt (tests; other extensions with their own policy). */
  setPermissionHandler(handler: ((params: PermissionParams) => Promise<PermissionAnswer>) | null): void;
  /** How many times "open in another window … read-only" was shown as a message. */
  heldNoticesShown(): number;
  /** The model picker's quick pick while it is open (tests pick from it as a user does). */
  openModelPick(): vscode.QuickPick<vscode.QuickPickItem> | null;
}

class AgentExtension implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel('agent_lsp', { log: true });
  readonly statusBar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  readonly panel: AgentPanel;
  readonly sessions: SessionController;
  readonly review: ReviewController;
  readonly server: AgentServer;
  /** Permission questions waiting in the panel. */
  readonly questions = new PermissionQuestions();
  /** The panel input's "/" menu. */
  readonly slash: SlashCommands;
  readonly before = new BeforeContent();
  readonly editors: EditorContext;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.server = new AgentServer(context, this.output, this);
    this.panel = new AgentPanel(context.extensionUri, (request) => void handlePanelRequest(this, request));
    this.sessions = new SessionController(
      context.workspaceState,
      () => this.server.requester(),
      (m) => this.panel.post(m),
    );
    this.review = new ReviewController(() => this.server.requester(), this.before, (m) => this.panel.post(m));
    this.slash = new SlashCommands(
      {
        requester: () => ({ request: this.server.serverRequest() }),
        workspaceUri: () => this.folderUri(),
        skills: () => this.sessions.skills(),
        runSkill: (name, text) => this.sessions.runSkill(name, text),
        sessionId: () => this.sessions.ensureSession(),
      },
      (items, loading) => this.panel.post({ type: 'slashItems', items, loading }),
    );
    this.editors = new EditorContext((label) => this.panel.post({ type: 'context', label }));
    this.disposables.push(
      this.output,
      new SaveGuard((message) => this.output.warn(message)),
      this.statusBar,
      this.panel,
      this.sessions,
      this.review,
      new HeldRefresh(this.sessions, () => this.server.requester()),
      this.questions,
      this.questions.onDidChange((card) => {
        this.panel.post({ type: 'permission', card });
        this.renderStatusBar();
        if (card && !this.panel.visible) {
          void this.panel.show(); // where the question is, leaving the focus where it is
        }
      }),
      vscode.window.registerWebviewViewProvider(AgentPanel.viewId, this.panel, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, this.before),
      this.sessions.onDidChangeStatus((status) => this.onStatus(status)),
      this.sessions.onDidChange(() => {
        if (this.sessions.sessionId !== this.heldNoticeFor) {
          this.heldNoticeFor = null; // another session: its own explanation when it is held too
        }
        this.renderStatusBar();
      }),
      this.editors,
      vscode.workspace.onDidChangeConfiguration((e) => void this.onConfigurationChange(e)),
      context.secrets.onDidChange(() => void this.server.loadKeys().then(() => this.server.pushSettings())),
    );
    this.statusBar.command = 'agentLsp.focus';
    this.statusBar.show();
    this.renderStatusBar();
  }

  get workspaceState(): vscode.Memento {
    return this.context.workspaceState;
  }

  get secrets(): vscode.SecretStorage {
    return this.context.secrets;
  }

  private async onConfigurationChange(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration('agentLsp')) {
      return;
    }
    if (e.affectsConfiguration('agentLsp.server')) {
      await this.server.restart();
      return;
    }
    this.postPrefs();
    this.server.pushSettings();
  }

  // -------------------------------------------------------------- UI state

  renderStatusBar(): void {
    const running = this.sessions.status === 'running' && !this.sessions.heldBy;
    const state = this.server.state;
    if (state === 'failed') {
      this.statusBar.text = '$(error) Agent';
      this.statusBar.tooltip = this.server.stateMessage || 'The agent server is not running';
    } else if (state === 'starting') {
      this.statusBar.text = '$(loading~spin) Agent: starting';
      this.statusBar.tooltip = 'Starting the agent server';
    } else if (this.sessions.heldBy) {
      this.statusBar.text = '$(lock) Agent: read-only';
      this.statusBar.tooltip = heldNotice(this.sessions.heldBy.pid, this.sessions.heldSnapshot);
    } else if (this.questions.isWaiting) {
      this.statusBar.text = '$(bell-dot) Agent: waiting for you';
      this.statusBar.tooltip = 'The agent asks before it goes on. Click to open the panel and answer.';
    } else if (running) {
      this.statusBar.text = '$(loading~spin) Agent: running';
      this.statusBar.tooltip = 'The agent is working. Click to open the panel.';
    } else {
      this.statusBar.text = '$(comment-discussion) Agent';
      this.statusBar.tooltip = state === 'running' ? 'Agent idle. Click to open the panel.' : 'The agent server is stopped';
    }
    const windows = this.sessions.sessionId ? (this.server.windows.get(this.sessions.sessionId) ?? 1) : 1;
    if (windows > 1 && state === 'running') {
      this.statusBar.text += ` $(multiple-windows) ${windows}`;
      this.statusBar.tooltip += `\nThis session is open in ${windows - 1} other window${windows > 2 ? 's' : ''} too.`;
    }
  }

  private previousStatus: AgentStatus = 'idle';

  private onStatus(status: AgentStatus): void {
    const running = status === 'running' && !this.sessions.heldBy;
    void vscode.commands.executeCommand('setContext', 'agentLsp.running', running);
    this.renderStatusBar();
    if (this.previousStatus === 'running' && status === 'idle' && !this.sessions.heldBy && !this.panel.visible) {
      // "Done" signal when the user is looking elsewhere.
      const text = markdownToPlain(lastAssistantText(this.sessions.transcript).split('\n\n')[0]).slice(0, 200);
      void vscode.window.showInformationMessage(`Agent: done${text ? ` — ${text}` : ''}`, 'Open').then((choice) => {
        if (choice === 'Open') {
          void this.panel.reveal();
        }
      });
    }
    this.previousStatus = running ? 'running' : 'idle';
  }

  /** Send the message of a failed turn again (default: the last turn), with its context. */
  async retryTurn(turn?: number): Promise<MessageRef> {
    const items = this.sessions.transcript.items;
    const end = [...items].reverse().find((i) => i.kind === 'turn-end' && (turn == null || i.turn === turn));
    const user = end && items.find((i) => i.kind === 'user' && i.turn === end.turn && !i.steer);
    if (!end || !user || user.kind !== 'user') {
      throw new Error(turn == null ? 'there is no turn to retry' : `turn ${turn} has no message to send again`);
    }
    const content = resentContent(user.text, user.images); // the images too: the server keeps them
    return this.sessions.send(chooseSendAction(this.sessions.status, this.whileRunning(), false), content, user.context);
  }

  folderUri(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.toString();
  }

  private attachOn(): boolean {
    return this.context.workspaceState.get<boolean>('agentLsp.attach') ?? this.server.config().get<boolean>('attachActiveEditor', true);
  }

  private whileRunning(): WhileRunning {
    return this.context.workspaceState.get<WhileRunning>('agentLsp.whileRunning') ?? this.server.config().get<WhileRunning>('defaultWhileRunning', 'queue');
  }

  postPrefs(): void {
    this.panel.post({ type: 'prefs', whileRunning: this.whileRunning(), attach: this.attachOn() });
  }

  async send(text: string, action?: SendAction, extra: ContextItem[] = [], images: ImageAttachment[] = []): Promise<MessageRef> {
    const chosen = action ?? chooseSendAction(this.sessions.status, this.whileRunning(), false);
    const context = await this.editors.contextFor(text, extra, this.attachOn());
    return this.sessions.send(chosen, messageContent(text, images), context);
  }

  async guarded<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (error) {
      const held = sessionInUse(error);
      if (held) {
        this.sessions.markHeld(held);
        void this.explainHeld(held.sessionId ?? this.sessions.sessionId, held.pid);
      } else {
        void vscode.window.showErrorMessage(`Agent: could not ${what}: ${message(error)}`);
      }
      return undefined;
    }
  }

  private heldNoticeFor: string | null = null;

  /** The session is open in another window: one explanation per session (not
   * one per attempt) with the way on; the panel keeps saying it in its banner. */
  private async explainHeld(sessionId: string | null, pid: number | null): Promise<void> {
    if (this.heldNoticeFor !== null && this.heldNoticeFor === sessionId) {
      return;
    }
    this.heldNoticeFor = sessionId;
    this.heldNoticesShown++;
    const choice = await vscode.window.showWarningMessage(`Agent: ${heldNotice(pid)}`, 'New Session');
    if (choice === 'New Session') {
      await this.guarded('start a new session', () => this.sessions.newSession());
      void this.panel.reveal();
    }
  }

  /** How many times the read-only explanation was shown (tests). */
  heldNoticesShown = 0;

  /** Revert a turn's edits (default: the last turn with edits). The server
   * decides what can be undone, also for turns of an earlier server run; its
   * answer is shown as it is, in the panel under the turn and as a message. */
  async revertTurn(turn?: number): Promise<RevertOutcome | undefined> {
    const reverted = this.sessions.reverts;
    const target =
      turn ??
      [...this.sessions.transcript.items]
        .reverse()
        .find((i): i is TurnEndItem => i.kind === 'turn-end' && i.hasEdits && i.turn != null && !this.sessions.transcript.reverts.has(i.turn) && (!reverted[i.turn] || !!reverted[i.turn].error))?.turn ??
      undefined;
    if (target == null) {
      void vscode.window.showInformationMessage('Agent: no turn with edits left to revert.');
      return undefined;
    }
    const outcome = await this.guarded('revert the turn', () => this.sessions.revertTurn(target));
    if (!outcome) {
      return undefined;
    }
    if (outcome.error) {
      void vscode.window.showErrorMessage(`Agent: could not revert turn ${target}: ${outcome.error}`);
    } else if (outcome.skipped.length) {
      const reverted = outcome.reverted.length ? `reverted ${outcome.reverted.join(', ')}; ` : '';
      void vscode.window.showWarningMessage(
        `Agent: turn ${target}: ${reverted}left alone: ${outcome.skipped.map((x) => `${x.path} (${x.reason})`).join('; ')}.`,
      );
    } else if (outcome.reverted.length) {
      if (this.panel.visible) {
        return outcome; // the panel says it under the turn
      }
      void vscode.window.showInformationMessage(`Agent: reverted turn ${target}: ${outcome.reverted.join(', ')}.`);
    } else {
      void vscode.window.showInformationMessage(`Agent: the server found no changes of turn ${target} left to revert (already reverted?).`);
    }
    return outcome;
  }

  registerCommands(): void {
    this.disposables.push(...registerCommands(this));
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

let extension: AgentExtension | null = null;

export async function activate(context: vscode.ExtensionContext): Promise<AgentLspApi> {
  const ext = new AgentExtension(context);
  extension = ext;
  context.subscriptions.push(ext);
  ext.registerCommands();
  void ext.server.start().catch(() => undefined);
  return {
    sessions: ext.sessions,
    review: ext.review,
    panel: ext.panel,
    questions: ext.questions,
    statusBarText: () => ext.statusBar.text,
    serverState: () => ext.server.state,
    whenServerReady: () => ext.server.whenReady(),
    client: () => ext.server.getClient(),
    send: (text, action) => ext.send(text, action),
    setPermissionHandler: (handler) => ext.server.setPermissionHandler(handler),
    heldNoticesShown: () => ext.heldNoticesShown,
    openModelPick: () => openPick,
  };
}

export async function deactivate(): Promise<void> {
  await extension?.server.stop();
  extension = null;
}
