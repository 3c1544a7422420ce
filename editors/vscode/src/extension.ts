// Activation: finds and starts the server, wires the panel, commands, status
// bar and settings together. The server does the work; this stays thin.

import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { createClient } from './client';
import { BEFORE_SCHEME, BeforeContent, showToolDiff } from './diffView';
import { SendAction, WhileRunning, chooseSendAction, parseMentions } from './input';
import { markdownToPlain } from './markdown';
import { AgentPanel, PanelRequest } from './panel';
import { runMcpPrompt } from './mcpPrompts';
import { SlashCommands } from './slashCommands';
import { checkModel, showFailure } from './connectionCheck';
import { PermissionQuestions } from './permissionCard';
import { managePermissions } from './permissionRules';
import { AgentErrorParams, AgentStatus, ContextItem, ModelCheckResult, PermissionAnswer, PermissionParams, PermissionRuleInfo, Request, RevertOutcome, lineLabel, sessionTitle, typedRequest } from './protocol';
import { DEMO_BANNER, chooseServerProgram, modelLabel, pythonExtensionInterpreter, setupModel } from './firstRun';
import { MISSING_SERVER_MESSAGE, ServerCommand, resolveServerCommand } from './serverCommand';
import { Requester, SessionController } from './sessions';
import { heldNotice, sessionInUse } from './sessionLock';
import { KEY_PROVIDERS, secretName, serverSettings, withoutDefaults } from './settings';
import { ToolItem, TurnEndItem, lastAssistantText, toolItemOf } from './transcript';
import { showMcpServers } from './mcpStatus';
import { runSkillCommand } from './skills';
import { nestSessions } from './subagents';
import { searchAsYouType } from './sessionSearch';
import { SaveGuard } from './saveGuard';
import { ReviewController } from './review';
import { ModelSwitch, openPick } from './modelPicker';
import { editQueued } from './queueActions';
import { forkTurn, rewindTurn } from './turnActions';

type ServerState = 'starting' | 'running' | 'failed' | 'stopped';

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

/** The action that replaces "Restart" when no agent-lsp was found. */
const CHOOSE_SERVER = 'Choose agent-lsp…';

/** Commands the server also offers (for generic editors); ours take precedence. */
const OWNED_COMMANDS = ['agentLsp.followup', 'agentLsp.steer', 'agentLsp.cancel', 'agentLsp.newSession'];

/** agentLsp.followup/steer arguments: [text] from a user or keybinding, or
 * [{content, context?}] from the server's code actions. */
/** A command's argument when a caller passed a string (the panel's ⋯ menu passes the view's context there). */
function stringArg(arg: unknown): string | undefined {
  return typeof arg === 'string' ? arg : undefined;
}

function commandInput(arg: unknown): { text?: string; context: ContextItem[] } {
  if (typeof arg === 'string') {
    return { text: arg, context: [] };
  }
  if (arg && typeof arg === 'object' && 'content' in arg) {
    const { content, context } = arg as { content: unknown; context?: ContextItem[] };
    const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: any) => b?.text ?? '').join('') : undefined;
    return { text, context: Array.isArray(context) ? context : [] };
  }
  return { context: [] };
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** One message for a server that could not start, naming the fix. */
function startFailure(command: ServerCommand, why: string): string {
  const setting = command.source.startsWith('agentLsp.') ? command.source : 'agentLsp.server.path';
  if (/ENOENT|EACCES/.test(why)) {
    const problem = /ENOENT/.test(why) ? 'does not exist' : 'is not executable';
    return `agent_lsp: the server could not start: ${command.command} ${problem} (from ${command.source}). Fix ${setting}, or clear it to use agent-lsp from the workspace .venv or PATH.`;
  }
  return `agent_lsp: the server (${command.command}) could not start: ${why}. See Agent: Show Log, or set ${setting}.`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class AgentExtension implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel('agent_lsp', { log: true });
  readonly statusBar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  readonly panel: AgentPanel;
  readonly sessions: SessionController;
  readonly review: ReviewController;
  /** Permission questions waiting in the panel. */
  readonly questions = new PermissionQuestions();
  /** The panel input's "/" menu. */
  private readonly slash: SlashCommands;
  private readonly before = new BeforeContent();
  private client: LanguageClient | null = null;
  private state: ServerState = 'stopped';
  private stateMessage = '';
  private ready: Promise<void> = Promise.resolve();
  private restarting: Promise<void> = Promise.resolve();
  private keys: Partial<Record<string, string>> = {};
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private failureShown = false;
  private restartLabel: string | undefined;
  private permissionHandler: ((params: PermissionParams) => Promise<PermissionAnswer>) | null = null;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.panel = new AgentPanel(context.extensionUri, (request) => void this.onPanelRequest(request));
    this.sessions = new SessionController(
      context.workspaceState,
      () => this.requester(),
      (m) => this.panel.post(m),
    );
    this.review = new ReviewController(() => this.requester());
    this.slash = new SlashCommands(
      {
        requester: () => ({ request: this.serverRequest() }),
        workspaceUri: () => this.folderUri(),
        skills: () => this.sessions.skills(),
        runSkill: (name, text) => this.sessions.runSkill(name, text),
        sessionId: () => this.sessions.ensureSession(),
      },
      (items, loading) => this.panel.post({ type: 'slashItems', items, loading }),
    );
    this.disposables.push(
      this.output,
      new SaveGuard((message) => this.output.warn(message)),
      this.statusBar,
      this.panel,
      this.sessions,
      this.review,
      this.questions,
      this.questions.onDidChange((card) => {
        this.panel.post({ type: 'permission', card });
        this.renderStatusBar();
        if (card && !this.panel.visible) {
          void this.panel.reveal(); // where the question is
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
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor && editor.document.uri.scheme !== 'output') {
          this.lastEditor = editor;
        }
        this.postContext();
      }),
      // A closed editor is no longer the one to attach (an untitled buffer
      // closed without saving is gone for good).
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        if (this.lastEditor && !editors.includes(this.lastEditor)) {
          this.lastEditor = vscode.window.activeTextEditor;
          this.postContext();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (this.lastEditor?.document === doc) {
          this.lastEditor = vscode.window.activeTextEditor;
          this.postContext();
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor === this.lastEditor) {
          this.postContext();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((e) => void this.onConfigurationChange(e)),
      context.secrets.onDidChange(() => void this.loadKeys().then(() => this.pushSettings())),
    );
    this.statusBar.command = 'agentLsp.focus';
    this.statusBar.show();
    this.renderStatusBar();
  }

  // ---------------------------------------------------------------- settings

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('agentLsp');
  }

  private async loadKeys(): Promise<void> {
    const keys: Partial<Record<string, string>> = {};
    for (const provider of KEY_PROVIDERS) {
      const key = await this.context.secrets.get(secretName(provider));
      if (key) {
        keys[provider] = key;
      }
    }
    this.keys = keys;
  }

  private serverSettings(): Record<string, unknown> {
    const config = this.config();
    const contributed = Object.keys(this.context.extension.packageJSON?.contributes?.configuration?.properties ?? {});
    const names = contributed.filter((n) => n.startsWith('agentLsp.')).map((n) => n.slice('agentLsp.'.length));
    const raw = withoutDefaults(JSON.parse(JSON.stringify(config)), names, (name) => config.inspect(name));
    return serverSettings(raw, this.keys);
  }

  private pushSettings(): void {
    if (this.client?.isRunning()) {
      void this.client.sendNotification('workspace/didChangeConfiguration', { settings: { agentLsp: this.serverSettings() } });
      // The server reads the new settings back (workspace/configuration) before it answers with the new model.
      setTimeout(() => void this.refreshModel(), 500);
    }
  }

  /** The panel's header names the model; with none configured its banner offers setup. */
  private async refreshModel(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) {
      return;
    }
    try {
      const info = await typedRequest((method, params) => client.sendRequest(method, params))('agent/model/info', {});
      this.panel.post({ type: 'model', label: modelLabel(info), demo: info.demo, detail: info.demo ? DEMO_BANNER : `${info.provider} ${info.model} (${info.reason})` });
    } catch (error) {
      this.output.appendLine(`Could not ask the server for its model: ${message(error)}`);
    }
  }

  private async onConfigurationChange(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration('agentLsp')) {
      return;
    }
    if (e.affectsConfiguration('agentLsp.server')) {
      await this.restart();
      return;
    }
    this.postPrefs();
    this.pushSettings();
  }

  // ------------------------------------------------------------------ server

  private setState(state: ServerState, detail = '', restart?: string): void {
    this.state = state;
    this.stateMessage = detail;
    this.restartLabel = restart;
    this.panel.post({ type: 'server', state, message: detail || undefined, restart });
    this.renderStatusBar();
  }

  /** `restart`: the label of the restart action ("Restart and resume" when a turn was cut short: the session reloads). */
  private async fail(text: string, restart = 'Restart'): Promise<void> {
    this.output.appendLine(text);
    this.setState('failed', text, restart);
    if (this.failureShown) {
      return; // one message, not a stack of them
    }
    this.failureShown = true;
    const choice = await vscode.window.showErrorMessage(text, 'Open Settings', 'Show Log', restart);
    this.failureShown = false;
    if (choice === CHOOSE_SERVER) {
      await chooseServerProgram(); // the changed setting restarts the server
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'agentLsp.server');
    } else if (choice === 'Show Log') {
      this.output.show(true);
    } else if (choice === restart && this.state === 'failed') {
      await this.restart();
    }
  }

  start(): Promise<void> {
    this.ready = this.doStart();
    return this.ready;
  }

  private async doStart(): Promise<void> {
    this.setState('starting');
    await this.loadKeys();
    const cfg = this.config();
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const command = resolveServerCommand(
      { path: cfg.get<string>('server.path', ''), pythonPath: cfg.get<string>('server.pythonPath', ''), args: cfg.get<string[]>('server.args', []) },
      folders,
      {
        pathVariable: process.env.PATH ?? '',
        platform: process.platform,
        isExecutable,
        home: os.homedir(),
        variables: process.env,
        pythonInterpreter: await pythonExtensionInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri),
      },
    );
    if (!command) {
      void this.fail(MISSING_SERVER_MESSAGE, CHOOSE_SERVER);
      throw new Error(MISSING_SERVER_MESSAGE);
    }
    this.output.appendLine(`Starting ${command.command} ${command.args.join(' ')} (found via ${command.source})`);
    const client = createClient(command, folders[0], cfg.get<Record<string, string>>('server.env', {}), this.output, this.serverSettings(), {
      sessionEvent: (p) => {
        this.sessions.handleEvents(p.sessionId, p.events ?? []);
        this.review.onEvents(p.events ?? []);
      },
      status: (p) => this.sessions.handleStatus(p.sessionId, p.status),
      error: (p) => this.onAgentError(p),
      toolProgress: (p) => this.sessions.handleToolProgress(p.sessionId, p.callId, p.data ?? {}),
      subagentStatus: (p) => this.sessions.handleSubagentStatus(p.sessionId, p),
      permission: (p) => (this.permissionHandler ? this.permissionHandler(p) : this.questions.ask(p)),
      settings: async () => this.serverSettings(),
      saveAgentEdits: () => this.config().get<boolean>('saveAgentEdits', true),
      stopped: (why: string) => {
        if (this.state !== 'running') {
          return;
        }
        // Nothing will answer the stopped client: end the running turn here (its
        // text stays) and send nothing more to it until the user restarts.
        const interrupted = this.sessions.serverStopped();
        this.questions.clear();
        this.client = null;
        void this.review.refresh(); // nothing to keep or undo until the server is back
        void client.dispose().catch(() => undefined);
        const text = interrupted
          ? `agent_lsp: ${why} The running turn was interrupted; what it wrote so far is kept. See the log for the server's output.`
          : `agent_lsp: ${why} See the log for the server's output.`;
        void this.fail(text, interrupted ? 'Restart and resume' : 'Restart');
      },
    }, OWNED_COMMANDS);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = null;
      void client.dispose().catch(() => undefined);
      const text = startFailure(command, message(error));
      void this.fail(text);
      throw new Error(text);
    }
    this.setState('running');
    void this.refreshModel();
    void this.review.refresh(); // the hunks pending before a restart (the server reads them back)
    await this.sessions.restore().catch((error) => this.output.appendLine(`Could not restore the session: ${message(error)}`));
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) {
      // A client still starting cannot be stopped (it would go on and keep the server's
      // commands registered, so the next one fails to start): let the start end first.
      await this.ready.catch(() => undefined);
      await client.stop(2000).catch(() => undefined);
    }
    this.setState('stopped');
  }

  /** One restart at a time: one asked while another is under way (two server settings
   * saved in a row) runs after it. */
  restart(): Promise<void> {
    this.restarting = this.restarting.then(async () => {
      await this.stop();
      await this.start().catch(() => undefined);
    });
    return this.restarting;
  }

  whenReady(): Promise<void> {
    return this.ready;
  }

  getClient(): LanguageClient | null {
    return this.client;
  }

  getState(): ServerState {
    return this.state;
  }

  setPermissionHandler(handler: ((params: PermissionParams) => Promise<PermissionAnswer>) | null): void {
    this.permissionHandler = handler;
  }

  // -------------------------------------------------------------- UI state

  private renderStatusBar(): void {
    const running = this.sessions.status === 'running' && !this.sessions.heldBy;
    if (this.state === 'failed') {
      this.statusBar.text = '$(error) Agent';
      this.statusBar.tooltip = this.stateMessage || 'The agent server is not running';
    } else if (this.state === 'starting') {
      this.statusBar.text = '$(loading~spin) Agent: starting';
      this.statusBar.tooltip = 'Starting the agent server';
    } else if (this.sessions.heldBy) {
      this.statusBar.text = '$(lock) Agent: read-only';
      this.statusBar.tooltip = heldNotice(this.sessions.heldBy.pid);
    } else if (this.questions.isWaiting) {
      this.statusBar.text = '$(bell-dot) Agent: waiting for you';
      this.statusBar.tooltip = 'The agent asks before it goes on. Click to open the panel and answer.';
    } else if (running) {
      this.statusBar.text = '$(loading~spin) Agent: running';
      this.statusBar.tooltip = 'The agent is working. Click to open the panel.';
    } else {
      this.statusBar.text = '$(comment-discussion) Agent';
      this.statusBar.tooltip = this.state === 'running' ? 'Agent idle. Click to open the panel.' : 'The agent server is stopped';
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

  private onAgentError(p: AgentErrorParams): void {
    this.output.appendLine(`[agent/error] ${p.sessionId}: ${p.error?.code ?? ''} ${p.error?.message ?? ''}`);
    if (p.sessionId === this.sessions.sessionId && !this.panel.visible) {
      void showFailure('Agent', p.error ?? {}, ['Open']).then((choice) => {
        if (choice === 'Open') {
          void this.panel.reveal();
        }
      });
    }
  }

  /** Send the message of a failed turn again (default: the last turn), with its context. */
  async retryTurn(turn?: number): Promise<{ sessionId: string; messageId: string }> {
    const items = this.sessions.transcript.items;
    const end = [...items].reverse().find((i) => i.kind === 'turn-end' && (turn == null || i.turn === turn));
    const user = end && items.find((i) => i.kind === 'user' && i.turn === end.turn && !i.steer);
    if (!end || !user || user.kind !== 'user') {
      throw new Error(turn == null ? 'there is no turn to retry' : `turn ${turn} has no message to send again`);
    }
    return this.sessions.send(chooseSendAction(this.sessions.status, this.whileRunning(), false), user.text, user.context);
  }

  private folderUri(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.toString();
  }

  /** Requests to the server while it runs; null while it does not. */
  private requester(): Requester | null {
    const client = this.client;
    return client ? { request: typedRequest((method, params) => client.sendRequest(method, params)) } : null;
  }

  private serverRequest(): Request {
    const client = this.client;
    if (!client) {
      throw new Error('the agent server is not running: start it with "Agent: Restart Server"');
    }
    return typedRequest((method, params) => client.sendRequest(method, params));
  }

  private attachOn(): boolean {
    return this.context.workspaceState.get<boolean>('agentLsp.attach') ?? this.config().get<boolean>('attachActiveEditor', true);
  }

  private whileRunning(): WhileRunning {
    return this.context.workspaceState.get<WhileRunning>('agentLsp.whileRunning') ?? this.config().get<WhileRunning>('defaultWhileRunning', 'queue');
  }

  private postPrefs(): void {
    this.panel.post({ type: 'prefs', whileRunning: this.whileRunning(), attach: this.attachOn() });
  }

  private editorContext(editor: vscode.TextEditor | undefined): ContextItem | null {
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

  private postContext(): void {
    const item = this.editorContext(this.lastEditor);
    let label: string | null = null;
    if (item) {
      label = vscode.workspace.asRelativePath(vscode.Uri.parse(item.uri));
      if (item.range) {
        label += `:${lineLabel(item.range)}`;
      }
    }
    this.panel.post({ type: 'context', label });
  }

  /** The active editor (when attaching is on) plus every @file mention that exists. */
  private async contextFor(text: string, extra: ContextItem[] = []): Promise<ContextItem[]> {
    const items: ContextItem[] = [...extra];
    if (!extra.length && this.attachOn()) {
      const active = this.editorContext(this.lastEditor);
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

  async send(text: string, action?: SendAction, extra: ContextItem[] = []): Promise<{ sessionId: string; messageId: string }> {
    const chosen = action ?? chooseSendAction(this.sessions.status, this.whileRunning(), false);
    const context = await this.contextFor(text, extra);
    return this.sessions.send(chosen, text, context);
  }

  private async guarded<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
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

  // ------------------------------------------------------------ panel input

  private async onPanelRequest(request: PanelRequest): Promise<void> {
    switch (request.type) {
      case 'ready':
        void this.refreshModel();
        this.postPrefs();
        this.postContext();
        this.panel.post({ type: 'server', state: this.state, message: this.stateMessage || undefined, restart: this.restartLabel });
        this.panel.post(this.sessions.snapshot());
        this.panel.post({ type: 'permission', card: this.questions.card });
        break;
      case 'answerPermission':
        this.questions.answer(request.id, request.answer);
        break;
      case 'retryTurn':
        await this.guarded('send the message again', () => this.retryTurn(request.turn ?? undefined));
        break;
      case 'command':
        await vscode.commands.executeCommand(request.command);
        break;
      case 'send': {
        const sent = await this.guarded('send the message', () => this.send(request.text, request.action));
        if (!sent) {
          this.panel.post({ type: 'insert', text: request.text }); // give the text back, not lose it
        }
        break;
      }
      case 'slashItems':
        await this.slash.refresh();
        break;
      case 'slash': {
        const ran = await this.guarded(`run /${request.name}`, () => this.slash.run(request.name, request.rest));
        if (!ran) {
          this.panel.post({ type: 'insert', text: request.text }); // dismissed or refused: the typed line comes back
        }
        break;
      }
      case 'cancel':
        await this.guarded('cancel', () => this.sessions.cancel());
        break;
      case 'removeQueued':
        await this.guarded('remove the queued message', () => this.sessions.removeQueued(request.messageId));
        break;
      case 'revertTurn':
        await this.revertTurn(request.turn);
        break;
      case 'showDiff':
        await vscode.commands.executeCommand('agentLsp.showDiff', request.key);
        break;
      case 'restartServer':
        if (this.restartLabel === CHOOSE_SERVER) {
          await chooseServerProgram(); // the changed setting restarts the server
        } else {
          await this.restart();
        }
        break;
      case 'setupModel':
        await setupModel();
        break;
      case 'copyCode':
        await vscode.env.clipboard.writeText(request.text);
        break;
      case 'insertCode':
        await this.insertCode(request.text);
        break;
      case 'openLink':
        await this.openLink(request.href);
        break;
      case 'newSession':
        await this.guarded('start a new session', () => this.sessions.newSession());
        break;
      case 'resumeSession':
        await vscode.commands.executeCommand('agentLsp.resumeSession');
        break;
      case 'toggleAttach':
        await this.context.workspaceState.update('agentLsp.attach', request.on);
        break;
      case 'forkTurn':
        await vscode.commands.executeCommand('agentLsp.forkTurn', request.turn);
        break;
      case 'rewindTurn':
        await vscode.commands.executeCommand('agentLsp.rewindTurn', request.turn);
        break;
      case 'editQueued':
        await vscode.commands.executeCommand('agentLsp.editQueued', request.messageId);
        break;
      case 'moveQueued':
        await this.guarded('move the queued message', () => this.sessions.moveQueued(request.messageId, request.to, request.index));
        break;
      case 'pauseQueue':
        await this.guarded(request.paused ? 'pause the queue' : 'resume the queue', () => this.sessions.pauseQueue(request.paused));
        break;
      case 'pickModel':
        await this.guarded('switch the model', () => this.sessions.pickModel());
        break;
      case 'setPlanMode':
        await this.guarded('switch plan mode', () => this.sessions.setPlanMode(request.on));
        break;
      case 'openSubagent':
        await this.guarded("open the sub-agent's transcript", () => this.sessions.load(request.sessionId));
        break;
      case 'cancelSubagent':
        await this.guarded('stop the sub-agent', () => this.sessions.cancelSubagent(request.sessionId));
        break;
      case 'setWhileRunning':
        await this.context.workspaceState.update('agentLsp.whileRunning', request.mode);
        break;
      case 'pickFile': {
        const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git,.venv,__pycache__}/**', 2000);
        const picked = await vscode.window.showQuickPick(
          files.map((f) => vscode.workspace.asRelativePath(f)).sort(),
          { placeHolder: 'Attach a file to the message (@file)' },
        );
        if (picked) {
          this.panel.post({ type: 'insert', text: `@${picked} ` });
        }
        break;
      }
      default:
        break;
    }
  }

  /** A code block's "Insert": at the cursor (over the selection) of the editor the user last worked in. */
  private async insertCode(text: string): Promise<void> {
    const editor = vscode.window.activeTextEditor ?? this.lastEditor;
    if (!editor || editor.document.isClosed) {
      void vscode.window.showInformationMessage('Agent: open a file to insert the code into.');
      return;
    }
    const shown = await vscode.window.showTextDocument(editor.document, editor.viewColumn);
    await shown.edit((edit) => {
      for (const selection of shown.selections) {
        edit.replace(selection, text);
      }
    });
  }

  private async openLink(href: string): Promise<void> {
    if (/^(https?:|mailto:)/i.test(href)) {
      await vscode.env.openExternal(vscode.Uri.parse(href));
      return;
    }
    const [path, line] = href.split('#L');
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      return;
    }
    const uri = vscode.Uri.joinPath(folder.uri, path);
    const doc = await this.guarded('open the file', () => Promise.resolve(vscode.workspace.openTextDocument(uri)));
    if (doc) {
      const at = Math.max(0, Number(line) - 1 || 0);
      await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, 0, at, 0) });
    }
  }

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

  // --------------------------------------------------------------- commands

  registerCommands(): void {
    const register = (id: string, fn: (...args: any[]) => unknown) => this.disposables.push(vscode.commands.registerCommand(id, fn));
    register('agentLsp.focus', () => this.panel.reveal());
    register('agentLsp.showLog', () => this.output.show(true));
    register('agentLsp.restartServer', () => this.restart());
    register('agentLsp.setupModel', () => setupModel());
    register('agentLsp.chooseServer', () => chooseServerProgram());
    register('agentLsp.followup', async (arg?: unknown) => {
      const { text, context } = commandInput(arg);
      const value = text ?? (await vscode.window.showInputBox({ prompt: 'Message to the agent' }));
      if (!value) {
        return undefined;
      }
      if (context.length) {
        void this.panel.reveal(); // a code action: show where the answer appears
      }
      return this.guarded('send the message', () => this.send(value, undefined, context));
    });
    register('agentLsp.steer', async (arg?: unknown) => {
      const { text, context } = commandInput(arg);
      const value = text ?? (await vscode.window.showInputBox({ prompt: 'Steer the running turn (enters at its next step)' }));
      return value ? this.guarded('steer', () => this.send(value, 'steer', context)) : undefined;
    });
    register('agentLsp.askAboutSelection', async (question?: string) => {
      const editor = vscode.window.activeTextEditor ?? this.lastEditor;
      const item = this.editorContext(editor);
      const value = question ?? (await vscode.window.showInputBox({ prompt: 'Ask the agent about the selection' }));
      if (!value) {
        return undefined;
      }
      void this.panel.reveal();
      return this.guarded('send the message', () => this.send(value, undefined, item ? [item] : []));
    });
    register('agentLsp.runMcpPrompt', () =>
      this.guarded('run the MCP prompt', async () => {
        const ref = await runMcpPrompt({ request: this.serverRequest() }, () => this.sessions.ensureSession(), this.folderUri());
        if (ref) {
          void this.panel.reveal();
        }
        return ref;
      }),
    );
    register('agentLsp.switchModel', (choice?: ModelSwitch) =>
      this.guarded('switch the model', async () => {
        if (!choice?.model) {
          return this.sessions.pickModel();
        }
        await this.sessions.setModel(choice);
        return choice;
      }),
    );
    // The panel's turn and queue actions, also for tests and keybindings (arguments skip the questions).
    register('agentLsp.forkTurn', (turn: number) => this.guarded('fork the session', () => forkTurn(this.sessions, turn)));
    register('agentLsp.rewindTurn', (turn: number, revertFiles?: boolean) =>
      this.guarded('rewind the session', () => rewindTurn(this.sessions, turn, revertFiles)),
    );
    register('agentLsp.editQueued', (messageId: string, text?: string) =>
      this.guarded('edit the queued message', () => editQueued(this.sessions, messageId, text)),
    );
    register('agentLsp.cancel', () => this.guarded('cancel', () => this.sessions.cancel()));
    register('agentLsp.newSession', async () => {
      const id = await this.guarded('start a new session', () => this.sessions.newSession());
      void this.panel.reveal();
      return id;
    });
    // The commands of the panel's ⋯ menu get the view's context as their argument there:
    // only a string (a number) is an id (a turn) a caller passed.
    register('agentLsp.resumeSession', async (arg?: unknown) => {
      const sessionId = stringArg(arg);
      if (sessionId) {
        return this.guarded('resume the session', () => this.sessions.load(sessionId));
      }
      await this.pickSession('Resume a session of this workspace', async (id) => {
        await this.sessions.load(id);
        void this.panel.reveal();
      });
      return undefined;
    });
    register('agentLsp.deleteSession', async (arg?: unknown) => {
      const sessionId = stringArg(arg);
      if (sessionId) {
        return this.guarded('delete the session', () => this.sessions.delete(sessionId));
      }
      await this.pickSession('Delete a session', async (id) => {
        await this.sessions.delete(id);
      });
      return undefined;
    });
    register('agentLsp.revertTurn', (turn?: unknown) => this.revertTurn(typeof turn === 'number' ? turn : undefined));
    register('agentLsp.compactSession', async () => {
      const compacted = await this.guarded('compact the conversation', () => this.sessions.compact());
      if (compacted === false) {
        void vscode.window.showInformationMessage(
          this.sessions.status === 'running' ? 'Agent: the conversation can be compacted when the turn has ended.' : 'Agent: nothing to compact yet.',
        );
      }
      return compacted;
    });
    register('agentLsp.showDiff', async (keyOrCallId: string) => {
      // a tool item's key (from the panel) or a call id (its latest item)
      const state = this.sessions.transcript;
      const item = (state.items.find((i) => i.kind === 'tool' && i.key === keyOrCallId) ?? toolItemOf(state, keyOrCallId)) as ToolItem | undefined;
      if (item) {
        await this.guarded('show the diff', () => showToolDiff(item, this.before));
      }
    });
    register('agentLsp.managePermissions', (ruleId?: unknown) =>
      this.guarded<PermissionRuleInfo[]>('manage the permissions', () =>
        managePermissions(this.serverRequest(), this.folderUri(), stringArg(ruleId))),
    );
    register('agentLsp.checkModel', () => this.guarded<ModelCheckResult>('check the model connection', () => checkModel(this.serverRequest(), this.folderUri())));
    register('agentLsp.retryTurn', (turn?: number) => this.guarded('send the message again', () => this.retryTurn(turn)));
    register('agentLsp.setApiKey', async () => {
      const provider = await vscode.window.showQuickPick([...KEY_PROVIDERS], { placeHolder: 'Which provider is the key for?' });
      if (!provider) {
        return;
      }
      const key = await vscode.window.showInputBox({ prompt: `API key for ${provider} (kept in VS Code's secret storage)`, password: true, ignoreFocusOut: true });
      if (key) {
        await this.context.secrets.store(secretName(provider), key.trim());
        void vscode.window.showInformationMessage(`Agent: the ${provider} key is stored.`);
      }
    });
    register('agentLsp.showMcpServers', () => this.guarded('list the MCP servers', () => showMcpServers(() => this.sessions.mcpServers(), () => this.serverRequest())));
    register('agentLsp.pickSkill', async (name?: unknown, text?: unknown) => {
      const ref = await this.guarded('run the skill', () => runSkillCommand(this.sessions, stringArg(name), stringArg(text)));
      if (ref) {
        void this.panel.reveal();
      }
      return ref;
    });
    register('agentLsp.clearApiKey', async () => {
      const provider = await vscode.window.showQuickPick([...KEY_PROVIDERS], { placeHolder: 'Forget the key of which provider?' });
      if (provider) {
        await this.context.secrets.delete(secretName(provider));
      }
    });
  }

  private async pickSession(placeHolder: string, act: (sessionId: string) => Promise<void>): Promise<void> {
    const sessions = await this.guarded('list sessions', () => this.sessions.list());
    if (!sessions) {
      return;
    }
    if (!sessions.length) {
      void vscode.window.showInformationMessage('Agent: no sessions in this workspace yet.');
      return;
    }
    const deleteButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete this session' };
    const when = (t: number | string | undefined) => (t == null ? '' : new Date(typeof t === 'number' ? t : Date.parse(t)).toLocaleString());
    const quickPick = vscode.window.createQuickPick<vscode.QuickPickItem & { sessionId: string }>();
    quickPick.placeholder = `${placeHolder} (type to search what was said in them too)`;
    const newestFirst = [...sessions].sort((a, b) => Number(new Date(b.updatedAt ?? 0)) - Number(new Date(a.updatedAt ?? 0)));
    quickPick.items = nestSessions(newestFirst) // a sub-agent's session right under its parent's
      .map(({ session: s, depth }) => ({
        label: `${depth ? `${'\u2003'.repeat(depth - 1)}↳ ` : ''}${sessionTitle(s.title) || (s.turns ? s.sessionId : 'New session (empty)')}`,
        description: `${depth ? 'sub-agent · ' : ''}${s.turns ?? 0} turn(s)${s.sessionId === this.sessions.sessionId ? ' · current' : ''}`,
        detail: `updated ${when(s.updatedAt)} · ${s.status ?? ''}`,
        sessionId: s.sessionId,
        buttons: [deleteButton],
      }));
    const search = searchAsYouType(quickPick, (query) => this.sessions.list(query));
    quickPick.onDidTriggerItemButton(async (e) => {
      await this.guarded('delete the session', () => this.sessions.delete(e.item.sessionId));
      search.forget(e.item.sessionId);
      quickPick.items = quickPick.items.filter((i) => i.sessionId !== e.item.sessionId);
    });
    quickPick.onDidAccept(async () => {
      const picked = quickPick.selectedItems[0];
      quickPick.hide();
      if (picked) {
        await this.guarded('open the session', () => act(picked.sessionId));
      }
    });
    quickPick.onDidHide(() => {
      search.dispose();
      quickPick.dispose();
    });
    quickPick.show();
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
  void ext.start().catch(() => undefined);
  return {
    sessions: ext.sessions,
    review: ext.review,
    panel: ext.panel,
    questions: ext.questions,
    statusBarText: () => ext.statusBar.text,
    serverState: () => ext.getState(),
    whenServerReady: () => ext.whenReady(),
    client: () => ext.getClient(),
    send: (text, action) => ext.send(text, action),
    setPermissionHandler: (handler) => ext.setPermissionHandler(handler),
    heldNoticesShown: () => ext.heldNoticesShown,
    openModelPick: () => openPick,
  };
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = null;
}
