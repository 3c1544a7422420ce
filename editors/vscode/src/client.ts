// The language client: starts agent-lsp over stdio, declares the agentLsp
// capabilities, routes the server's custom notifications and requests, and
// saves agent-edited files after applying them.

import * as vscode from 'vscode';
import {
  CancellationToken,
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { ApplyEditAgentLsp, LanguageQueryParams, LanguageQueryResult, PermissionAnswer, PermissionParams, ServerNotifications, ServerRequests } from './protocol';
import { askElicitation } from './elicitation';
import { ServerCommand } from './serverCommand';
import { stderrLevels } from './serverLog';
import * as readline from 'node:readline';

export interface ClientHandlers {
  sessionEvent(params: ServerNotifications['session/event']): void;
  status(params: ServerNotifications['agent/status']): void;
  error(params: ServerNotifications['agent/error']): void;
  toolProgress(params: ServerNotifications['agent/tool/progress']): void;
  subagentStatus(params: ServerNotifications['agent/subagent/status']): void;
  permission(params: PermissionParams): Promise<PermissionAnswer>;
  /** A question asked here too was answered in another window of the agent host. */
  permissionAnswered(params: ServerNotifications['agent/permission/answered']): void;
  settings(): Promise<Record<string, unknown>>;
  saveAgentEdits(): boolean;
  /** agent/languageQuery: VS Code's own language features answer. */
  languageQuery(params: LanguageQueryParams): Promise<LanguageQueryResult>;
  /** The server stopped on its own (crash, exit). */
  stopped(message: string): void;
}

/** Declares `capabilities.experimental.agentLsp` so the server uses the
 * custom permission and save requests instead of the generic fallbacks, and
 * asks VS Code's language features first (agent/languageQuery). */
class AgentCapabilities implements StaticFeature {
  fillClientCapabilities(capabilities: any): void {
    capabilities.experimental = {
      ...(capabilities.experimental ?? {}),
      agentLsp: { permissions: true, saveDocuments: true, events: true, elicitation: true, languageQuery: true },
    };
    // The panel and the one status bar item show that the agent works; the
    // server's work-done progress would be a second status bar item.
    if (capabilities.window) {
      capabilities.window.workDoneProgress = false;
    }
  }
  initialize(): void {}
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }
  clear(): void {}
}

/** The extension reports a failed start itself, once and with the fix; the
 * library's own forced "couldn't create connection" toast would be a second. */
class AgentLanguageClient extends LanguageClient {
  override error(message: string, data?: any, showNotification: boolean | 'force' = true): void {
    super.error(message, data, showNotification === 'force' ? false : showNotification);
  }
}

function editedUris(edit: any): string[] {
  const uris: string[] = [];
  for (const change of edit?.documentChanges ?? []) {
    if (change?.textDocument?.uri) {
      uris.push(change.textDocument.uri);
    } else if (change?.kind === 'create' && change.uri) {
      uris.push(change.uri);
    } else if (change?.kind === 'rename' && change.newUri) {
      uris.push(change.newUri);
    }
  }
  uris.push(...Object.keys(edit?.changes ?? {}));
  return [...new Set(uris)];
}

/** Write the open buffers of these URIs to disk (agent/saveDocuments and saveAgentEdits). */
export async function saveDocuments(uris: string[]): Promise<void> {
  const wanted = new Set(uris.map((u) => vscode.Uri.parse(u).toString()));
  const saves = vscode.workspace.textDocuments
    .filter((doc) => wanted.has(doc.uri.toString()) && doc.isDirty)
    .map((doc) => doc.save());
  await Promise.all(saves);
}

function firstVersionMismatch(edit: any): string | null {
  for (const change of edit?.documentChanges ?? []) {
    const version = change?.textDocument?.version;
    if (typeof version !== 'number') {
      continue;
    }
    const uri = vscode.Uri.parse(change.textDocument.uri).toString();
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    if (doc && doc.version !== version) {
      return `${vscode.workspace.asRelativePath(doc.uri)} changed since the agent read it (version ${doc.version}, edit for ${version})`;
    }
  }
  return null;
}

export function createClient(
  command: ServerCommand,
  cwd: string | undefined,
  env: Record<string, string>,
  output: vscode.LogOutputChannel,
  initializationOptions: Record<string, unknown>,
  handlers: ClientHandlers,
  ownedCommands: string[] = [],
): LanguageClient {
  const serverOptions: ServerOptions = {
    command: command.command,
    args: command.args,
    transport: TransportKind.stdio,
    options: { cwd, env: { ...process.env, ...env } },
  };
  let expectedStop = false;
  const clientOptions: LanguageClientOptions = {
    // Every buffer, so the agent reads what the user sees (unsaved text included).
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never, // one message of ours instead
    // The server's log lines at their own level (a WARNING is no [error]).
    stdioOptions: {
      stdout: (input, channel) => readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (line) => channel.info(line)),
      stderr: (input, channel) => {
        const level = stderrLevels();
        readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (line) => channel[level(line)](line));
      },
    },
    initializationOptions,
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: () => {
        if (!expectedStop) {
          handlers.stopped('the agent_lsp server stopped unexpectedly.');
        }
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          const settings = await handlers.settings();
          return params.items.map((item, i) => (item.section === 'agentLsp' ? settings : result[i]));
        },
        handleApplyEdit: async (params, next) => {
          const mismatch = firstVersionMismatch(params.edit);
          if (mismatch) {
            return { applied: false, failureReason: mismatch };
          }
          const result = await next(params, CancellationToken.None);
          // In review mode (however edits.review was set: the server says so) the edit waits
          // unsaved for Keep / Undo (review.ts); the server asks for the save after.
          const review = (params as { agentLsp?: ApplyEditAgentLsp }).agentLsp?.review;
          if (result && 'applied' in result && result.applied && handlers.saveAgentEdits() && review !== 'review') {
            await saveDocuments(editedUris(params.edit));
          }
          return result;
        },
      },
    },
  };
  const client = new AgentLanguageClient('agentLsp', 'agent_lsp', serverOptions, clientOptions);
  client.registerFeature(new AgentCapabilities());
  // The server offers agentLsp.followup/steer/cancel/newSession for generic
  // editors; here the extension owns those command ids (its versions use the
  // panel's session), so the client must not register proxies for them.
  const commands = client.getFeature(ExecuteCommandRequest.method);
  const register = commands.register.bind(commands);
  commands.register = (data) => {
    const rest = (data.registerOptions.commands ?? []).filter((c) => !ownedCommands.includes(c));
    if (rest.length) {
      register({ ...data, registerOptions: { ...data.registerOptions, commands: rest } });
    }
  };
  const onNotification = <M extends keyof ServerNotifications>(method: M, handler: (params: ServerNotifications[M]) => void) =>
    client.onNotification(method, handler);
  const onRequest = <M extends keyof ServerRequests>(method: M, handler: (params: ServerRequests[M]['params']) => Promise<ServerRequests[M]['result']>) =>
    client.onRequest(method, handler);
  onNotification('session/event', handlers.sessionEvent);
  onNotification('agent/status', handlers.status);
  onNotification('agent/error', handlers.error);
  onNotification('agent/tool/progress', handlers.toolProgress);
  onNotification('agent/subagent/status', handlers.subagentStatus);
  onNotification('agent/permission/answered', handlers.permissionAnswered);
  onRequest('agent/permission', (params) => handlers.permission(params).then((answer) => ({ answer })));
  onRequest('agent/elicit', (params) => askElicitation(params));
  onRequest('agent/languageQuery', (params) => handlers.languageQuery(params));
  onRequest('agent/saveDocuments', async (params) => {
    await saveDocuments(params?.uris ?? []);
    return {};
  });
  client.onDidChangeState((e) => {
    if (e.newState === State.Starting) {
      expectedStop = false;
    }
  });
  const stop = client.stop.bind(client);
  client.stop = (timeout?: number) => {
    expectedStop = true;
    return stop(timeout);
  };
  return client;
}
