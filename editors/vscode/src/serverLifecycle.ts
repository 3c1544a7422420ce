// The server's life in this window: finding the program, starting it with the
// settings and API keys, routing what it sends, restarting it one at a time
// and saying, once and with the fix, why it failed or stopped.

import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { attendEvents, attendQuestion } from './attention';
import { createClient } from './client';
import { showFailure } from './connectionCheck';
import { DEMO_BANNER, chooseServerProgram, modelLabel, pythonExtensionInterpreter } from './firstRun';
import type { AgentPanel } from './panel';
import type { PermissionQuestions } from './permissionCard';
import { AgentErrorParams, PermissionAnswer, PermissionParams, Request, typedRequest } from './protocol';
import type { ReviewController } from './review';
import { MISSING_SERVER_MESSAGE, ServerCommand, resolveServerCommand } from './serverCommand';
import type { Requester, SessionController } from './sessions';
import { DiagnosticsWatch, languageQueryHandler } from './languageQuery';
import { KEY_PROVIDERS, secretName, serverSettings, userValue, withoutDefaults } from './settings';

export type ServerState = 'starting' | 'running' | 'failed' | 'stopped';

/** The action that replaces "Restart" when no agent-lsp was found. */
export const CHOOSE_SERVER = 'Choose agent-lsp…';

/** Commands the server also offers (for generic editors); ours take precedence. */
const OWNED_COMMANDS = ['agentLsp.followup', 'agentLsp.steer', 'agentLsp.cancel', 'agentLsp.newSession'];

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

/** What the server's notifications and requests go to (read when they arrive). */
export interface ServerWiring {
  readonly panel: AgentPanel;
  readonly sessions: SessionController;
  readonly review: ReviewController;
  readonly questions: PermissionQuestions;
  /** The server's state changed: redraw the status bar. */
  renderStatusBar(): void;
}

export class AgentServer {
  private client: LanguageClient | null = null;
  private serverState: ServerState = 'stopped';
  private stateText = '';
  private ready: Promise<void> = Promise.resolve();
  private restarting: Promise<void> = Promise.resolve();
  private keys: Partial<Record<string, string>> = {};
  private failureShown = false;
  /** The server ran and stopped (not: could not start): its message offers Restart first. */
  private crashed = false;
  private restartText: string | undefined;
  private permissionHandler: ((params: PermissionParams) => Promise<PermissionAnswer>) | null = null;
  /** What VS Code's diagnostics reported in this window (agent/languageQuery waits on it). */
  private readonly diagnosticsWatch = new DiagnosticsWatch();
  /** On the agent host: how many windows have each session open (agent/session/presence). */
  readonly windows = new Map<string, number>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly wiring: ServerWiring,
  ) {
    context.subscriptions.push(this.diagnosticsWatch);
  }

  // ---------------------------------------------------------------- settings

  config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('agentLsp');
  }

  async loadKeys(): Promise<void> {
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

  pushSettings(): void {
    if (this.client?.isRunning()) {
      void this.client.sendNotification('workspace/didChangeConfiguration', { settings: { agentLsp: this.serverSettings() } });
      // The server reads the new settings back (workspace/configuration) before it answers with the new model.
      setTimeout(() => void this.refreshModel(), 500);
    }
  }

  /** The panel's header names the model; with none configured its banner offers setup. */
  async refreshModel(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) {
      return;
    }
    try {
      const info = await typedRequest((method, params) => client.sendRequest(method, params))('agent/model/info', {});
      this.wiring.panel.post({ type: 'model', label: modelLabel(info), demo: info.demo, detail: info.demo ? DEMO_BANNER : `${info.provider} ${info.model} (${info.reason})` });
    } catch (error) {
      this.output.appendLine(`Could not ask the server for its model: ${message(error)}`);
    }
  }

  // ------------------------------------------------------------------ state

  get state(): ServerState {
    return this.serverState;
  }

  get stateMessage(): string {
    return this.stateText;
  }

  /** The label of the panel's restart action while the server is failed. */
  get restartLabel(): string | undefined {
    return this.restartText;
  }

  private setState(state: ServerState, detail = '', restart?: string): void {
    this.serverState = state;
    this.stateText = detail;
    this.restartText = restart;
    this.wiring.panel.post({ type: 'server', state, message: detail || undefined, restart });
    this.wiring.renderStatusBar();
  }

  /** `restart`: the label of the restart action ("Restart and resume" when a turn was cut short: the session reloads). */
  private async fail(text: string, restart = 'Restart'): Promise<void> {
    this.output.appendLine(text);
    this.setState('failed', text, restart);
    if (this.failureShown) {
      return; // one message, not a stack of them
    }
    this.failureShown = true;
    // The first button is the default: Restart for a server that ran and stopped,
    // the settings for one that could not start.
    const buttons = this.crashed ? [restart, 'Show Log', 'Open Settings'] : ['Open Settings', 'Show Log', restart];
    const choice = await vscode.window.showErrorMessage(text, ...buttons);
    this.failureShown = false;
    if (choice === CHOOSE_SERVER) {
      await chooseServerProgram(); // the changed setting restarts the server
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'agentLsp.server');
    } else if (choice === 'Show Log') {
      this.output.show(true);
    } else if (choice === restart && this.serverState === 'failed') {
      await this.restart();
    }
  }

  // ------------------------------------------------------------ start, stop

  start(): Promise<void> {
    this.ready = this.doStart();
    return this.ready;
  }

  private async doStart(): Promise<void> {
    const { sessions, review, questions } = this.wiring;
    this.crashed = false;
    this.setState('starting');
    await this.loadKeys();
    const cfg = this.config();
    const user = <T>(name: string, fallback: T): T => userValue((n) => cfg.inspect(n), name, fallback);
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const command = resolveServerCommand(
      { path: user<string>('server.path', ''), pythonPath: user<string>('server.pythonPath', ''), args: user<string[]>('server.args', []) },
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
    const client = createClient(command, folders[0], user<Record<string, string>>('server.env', {}), this.output, this.serverSettings(), {
      sessionEvent: (p) => {
        sessions.handleEvents(p.sessionId, p.events ?? []);
        review.onEvents(p.events ?? []);
        attendEvents(p.events ?? []);
      },
      status: (p) => sessions.handleStatus(p.sessionId, p.status),
      error: (p) => this.onAgentError(p),
      toolProgress: (p) => sessions.handleToolProgress(p.sessionId, p.callId, p.data ?? {}),
      subagentStatus: (p) => sessions.handleSubagentStatus(p.sessionId, p),
      permission: (p) => {
        attendQuestion(p.title);
        return this.permissionHandler ? this.permissionHandler(p) : questions.ask(p);
      },
      sessionPresence: (p) => {
        this.windows.set(p.sessionId, p.windows);
        this.wiring.renderStatusBar();
      },
      permissionAnswered: (p) => {
        if (questions.settle(p.permissionId)) {
          void vscode.window.setStatusBarMessage('agent_lsp: the question was answered in another window', 5000);
        }
      },
      settings: async () => this.serverSettings(),
      saveAgentEdits: () => this.config().get<boolean>('saveAgentEdits', true),
      languageQuery: languageQueryHandler(
        this.diagnosticsWatch,
        () => this.client?.initializeResult?.capabilities.positionEncoding,
        (command) => command.startsWith('agentLsp.'),
      ),
      stopped: (why: string) => {
        if (this.serverState !== 'running') {
          return;
        }
        // Nothing will answer the stopped client: end the running turn here (its
        // text stays) and send nothing more to it until the user restarts.
        const interrupted = sessions.serverStopped();
        questions.clear();
        this.client = null;
        void review.refresh(); // nothing to keep or undo until the server is back
        void client.dispose().catch(() => undefined);
        const text = interrupted
          ? `agent_lsp: ${why} The running turn was interrupted; what it wrote so far is kept. See the log for the server's output.`
          : `agent_lsp: ${why} See the log for the server's output.`;
        this.crashed = true;
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
    void review.refresh(); // the hunks pending before a restart (the server reads them back)
    await sessions.restore().catch((error) => this.output.appendLine(`Could not restore the session: ${message(error)}`));
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

  setPermissionHandler(handler: ((params: PermissionParams) => Promise<PermissionAnswer>) | null): void {
    this.permissionHandler = handler;
  }

  // --------------------------------------------------------------- requests

  /** Requests to the server while it runs; null while it does not. */
  requester(): Requester | null {
    const client = this.client;
    return client ? { request: typedRequest((method, params) => client.sendRequest(method, params)) } : null;
  }

  /** Requests to the server; throws, saying how to start it, while it does not run. */
  serverRequest(): Request {
    const client = this.client;
    if (!client) {
      throw new Error('the agent server is not running: start it with "Agent: Restart Server"');
    }
    return typedRequest((method, params) => client.sendRequest(method, params));
  }

  private onAgentError(p: AgentErrorParams): void {
    const { sessions, panel } = this.wiring;
    this.output.appendLine(`[agent/error] ${p.sessionId}: ${p.error?.code ?? ''} ${p.error?.message ?? ''}`);
    if (p.sessionId === sessions.sessionId && !panel.visible) {
      void showFailure('Agent', p.error ?? {}, ['Open']).then((choice) => {
        if (choice === 'Open') {
          void panel.reveal();
        }
      });
    }
  }
}
