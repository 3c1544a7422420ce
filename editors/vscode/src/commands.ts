// The extension's commands (package.json contributes them): what each does
// with the session, the server and the editors. A command that fails says so
// once, as a message, and returns undefined.

import * as vscode from 'vscode';
import { checkModel, CheckResult } from './connectionCheck';
import { BeforeContent, showToolDiff } from './diffView';
import type { EditorContext } from './editorContext';
import { chooseServerProgram, setupModel } from './firstRun';
import { pickImages } from './imageRequests';
import type { SendAction } from './input';
import { runMcpPrompt } from './mcpPrompts';
import { showMcpServers } from './mcpStatus';
import { ModelSwitch } from './modelPicker';
import type { AgentPanel } from './panel';
import { managePermissions } from './permissionRules';
import { ContextItem, MessageRef, PermissionRuleInfo, RevertOutcome, sessionTitle } from './protocol';
import { editQueued } from './queueActions';
import type { AgentServer } from './serverLifecycle';
import type { SessionController } from './sessions';
import { searchAsYouType } from './sessionSearch';
import { KEY_PROVIDERS, secretName } from './settings';
import { runSkillCommand } from './skills';
import { nestSessions } from './subagents';
import { ToolItem, toolItemOf } from './transcript';
import { forkTurn, rewindTurn } from './turnActions';

/** What the commands act on. */
export interface CommandHost {
  readonly sessions: SessionController;
  readonly panel: AgentPanel;
  readonly server: AgentServer;
  readonly editors: EditorContext;
  readonly output: vscode.LogOutputChannel;
  /** The files as they were before the agent's edits (the diff's left side). */
  readonly before: BeforeContent;
  /** Where the API keys are kept. */
  readonly secrets: vscode.SecretStorage;
  folderUri(): string | undefined;
  guarded<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
  send(text: string, action?: SendAction, extra?: ContextItem[]): Promise<MessageRef>;
  retryTurn(turn?: number): Promise<MessageRef>;
  revertTurn(turn?: number): Promise<RevertOutcome | undefined>;
}

/** A command's argument when a caller passed a string (the panel's ⋯ menu passes the view's context there). */
export function stringArg(arg: unknown): string | undefined {
  return typeof arg === 'string' ? arg : undefined;
}

/** agentLsp.followup/steer arguments: [text] from a user or keybinding, or
 * [{content, context?}] from the server's code actions. */
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

/** Register every command of the extension; dispose what it returns to unregister them. */
export function registerCommands(host: CommandHost): vscode.Disposable[] {
  const disposables: vscode.Disposable[] = [];
  const register = (id: string, fn: (...args: any[]) => unknown) => disposables.push(vscode.commands.registerCommand(id, fn));
  register('agentLsp.focus', () => host.panel.reveal());
  register('agentLsp.showLog', () => host.output.show(true));
  // From the palette a file dialog; with image file URIs (an explorer's selection, a test) those files.
  register('agentLsp.attachImage', (uri?: vscode.Uri, uris?: vscode.Uri[]) =>
    pickImages(host, uris?.length ? uris : uri instanceof vscode.Uri ? [uri] : undefined));
  register('agentLsp.restartServer', () => host.server.restart());
  register('agentLsp.setupModel', () => setupModel());
  register('agentLsp.chooseServer', () => chooseServerProgram());
  register('agentLsp.followup', async (arg?: unknown) => {
    const { text, context } = commandInput(arg);
    const value = text ?? (await vscode.window.showInputBox({ prompt: 'Message to the agent' }));
    if (!value) {
      return undefined;
    }
    if (context.length) {
      void host.panel.reveal(); // a code action: show where the answer appears
    }
    return host.guarded('send the message', () => host.send(value, undefined, context));
  });
  register('agentLsp.steer', async (arg?: unknown) => {
    const { text, context } = commandInput(arg);
    const value = text ?? (await vscode.window.showInputBox({ prompt: 'Steer the running turn (enters at its next step)' }));
    return value ? host.guarded('steer', () => host.send(value, 'steer', context)) : undefined;
  });
  register('agentLsp.askAboutSelection', async (question?: string) => {
    const editor = vscode.window.activeTextEditor ?? host.editors.lastEditor;
    const item = host.editors.itemOf(editor);
    const value = question ?? (await vscode.window.showInputBox({ prompt: 'Ask the agent about the selection' }));
    if (!value) {
      return undefined;
    }
    void host.panel.reveal();
    return host.guarded('send the message', () => host.send(value, undefined, item ? [item] : []));
  });
  register('agentLsp.runMcpPrompt', () =>
    host.guarded('run the MCP prompt', async () => {
      const ref = await runMcpPrompt({ request: host.server.serverRequest() }, () => host.sessions.ensureSession(), host.folderUri());
      if (ref) {
        void host.panel.reveal();
      }
      return ref;
    }),
  );
  register('agentLsp.switchModel', (choice?: ModelSwitch) =>
    host.guarded('switch the model', async () => {
      if (!choice?.model) {
        return host.sessions.pickModel();
      }
      await host.sessions.setModel(choice);
      return choice;
    }),
  );
  // The panel's turn and queue actions, also for tests and keybindings (arguments skip the questions).
  register('agentLsp.forkTurn', (turn: number) => host.guarded('fork the session', () => forkTurn(host.sessions, turn)));
  register('agentLsp.rewindTurn', (turn: number, revertFiles?: boolean) =>
    host.guarded('rewind the session', () => rewindTurn(host.sessions, turn, revertFiles)),
  );
  register('agentLsp.editQueued', (messageId: string, text?: string) =>
    host.guarded('edit the queued message', () => editQueued(host.sessions, messageId, text)),
  );
  register('agentLsp.cancel', () => host.guarded('cancel', () => host.sessions.cancel()));
  register('agentLsp.newSession', async () => {
    const id = await host.guarded('start a new session', () => host.sessions.newSession());
    void host.panel.reveal();
    return id;
  });
  // The commands of the panel's ⋯ menu get the view's context as their argument there:
  // only a string (a number) is an id (a turn) a caller passed.
  register('agentLsp.resumeSession', async (arg?: unknown) => {
    const sessionId = stringArg(arg);
    if (sessionId) {
      return host.guarded('resume the session', () => host.sessions.load(sessionId));
    }
    await pickSession(host, 'Resume a session of this workspace', async (id) => {
      await host.sessions.load(id);
      void host.panel.reveal();
    });
    return undefined;
  });
  register('agentLsp.deleteSession', async (arg?: unknown) => {
    const sessionId = stringArg(arg);
    if (sessionId) {
      return host.guarded('delete the session', () => host.sessions.delete(sessionId));
    }
    await pickSession(host, 'Delete a session', async (id) => {
      await host.sessions.delete(id);
    });
    return undefined;
  });
  // [sessionId, file] from tests and keybindings skip the questions.
  register('agentLsp.exportSession', (arg?: unknown, file?: unknown) =>
    host.guarded('export the session', async () => {
      const sessionId = stringArg(arg) ?? host.sessions.sessionId;
      if (!sessionId) {
        void vscode.window.showInformationMessage('Agent: no session to export yet.');
        return undefined;
      }
      const exported = await host.server.serverRequest()('agent/session/export', { sessionId });
      const name = `${(exported.title ?? sessionId).replace(/[^\p{L}\p{N} _-]+/gu, '').trim().slice(0, 60) || sessionId}.md`;
      const folder = host.folderUri();
      const target = typeof file === 'string' ? vscode.Uri.file(file)
        : await vscode.window.showSaveDialog({ defaultUri: folder ? vscode.Uri.joinPath(vscode.Uri.parse(folder), name) : undefined,
                                               filters: { Markdown: ['md'] }, saveLabel: 'Export' });
      if (!target) {
        return undefined;
      }
      await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(exported.markdown));
      if (typeof file !== 'string') {
        await vscode.window.showTextDocument(target);
      }
      return target.fsPath;
    }),
  );
  register('agentLsp.revertTurn', (turn?: unknown) => host.revertTurn(typeof turn === 'number' ? turn : undefined));
  register('agentLsp.compactSession', async () => {
    const compacted = await host.guarded('compact the conversation', () => host.sessions.compact());
    if (compacted === false) {
      void vscode.window.showInformationMessage(
        host.sessions.status === 'running' ? 'Agent: the conversation can be compacted when the turn has ended.' : 'Agent: nothing to compact yet.',
      );
    }
    return compacted;
  });
  register('agentLsp.showDiff', async (keyOrCallId: string) => {
    // a tool item's key (from the panel) or a call id (its latest item)
    const state = host.sessions.transcript;
    const item = (state.items.find((i) => i.kind === 'tool' && i.key === keyOrCallId) ?? toolItemOf(state, keyOrCallId)) as ToolItem | undefined;
    if (item) {
      await host.guarded('show the diff', () => showToolDiff(item, host.before));
    }
  });
  register('agentLsp.managePermissions', (ruleId?: unknown) =>
    host.guarded<PermissionRuleInfo[]>('manage the permissions', () =>
      managePermissions(host.server.serverRequest(), host.folderUri(), stringArg(ruleId))),
  );
  register('agentLsp.checkModel', () => host.guarded<CheckResult>('check the model connection and the language servers', () => checkModel(host.server.serverRequest(), host.folderUri())));
  register('agentLsp.retryTurn', (turn?: number) => host.guarded('send the message again', () => host.retryTurn(turn)));
  register('agentLsp.setApiKey', async () => {
    const provider = await vscode.window.showQuickPick([...KEY_PROVIDERS], { placeHolder: 'Which provider is the key for?' });
    if (!provider) {
      return;
    }
    const key = await vscode.window.showInputBox({ prompt: `API key for ${provider} (kept in VS Code's secret storage)`, password: true, ignoreFocusOut: true });
    if (key) {
      await host.secrets.store(secretName(provider), key.trim());
      void vscode.window.showInformationMessage(`Agent: the ${provider} key is stored.`);
    }
  });
  register('agentLsp.showMcpServers', () => host.guarded('list the MCP servers', () => showMcpServers(() => host.sessions.mcpServers(), () => host.server.serverRequest())));
  register('agentLsp.pickSkill', async (name?: unknown, text?: unknown) => {
    const ref = await host.guarded('run the skill', () => runSkillCommand(host.sessions, stringArg(name), stringArg(text)));
    if (ref) {
      void host.panel.reveal();
    }
    return ref;
  });
  register('agentLsp.clearApiKey', async () => {
    const provider = await vscode.window.showQuickPick([...KEY_PROVIDERS], { placeHolder: 'Forget the key of which provider?' });
    if (provider) {
      await host.secrets.delete(secretName(provider));
    }
  });
  return disposables;
}

async function pickSession(host: CommandHost, placeHolder: string, act: (sessionId: string) => Promise<void>): Promise<void> {
  const sessions = await host.guarded('list sessions', () => host.sessions.list());
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
      description: `${depth ? 'sub-agent · ' : ''}${s.turns ?? 0} turn(s)${s.sessionId === host.sessions.sessionId ? ' · current' : ''}`,
      detail: `updated ${when(s.updatedAt)} · ${s.status ?? ''}`,
      sessionId: s.sessionId,
      buttons: [deleteButton],
    }));
  const search = searchAsYouType(quickPick, (query) => host.sessions.list(query));
  quickPick.onDidTriggerItemButton(async (e) => {
    await host.guarded('delete the session', () => host.sessions.delete(e.item.sessionId));
    search.forget(e.item.sessionId);
    quickPick.items = quickPick.items.filter((i) => i.sessionId !== e.item.sessionId);
  });
  quickPick.onDidAccept(async () => {
    const picked = quickPick.selectedItems[0];
    quickPick.hide();
    if (picked) {
      await host.guarded('open the session', () => act(picked.sessionId));
    }
  });
  quickPick.onDidHide(() => {
    search.dispose();
    quickPick.dispose();
  });
  quickPick.show();
}
