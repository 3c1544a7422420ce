// The panel's requests (panel.ts, from the webview): each one a session
// request, a command, or a change of the panel's preferences, with failures
// said once as a message (the sent text comes back to the input).

import * as vscode from 'vscode';
import { BeforeContent, showUnifiedDiff } from './diffView';
import type { EditorContext } from './editorContext';
import { attachImageFiles, loadImage, openImage, pickImages } from './imageRequests';
import type { ImageAttachment } from './images';
import { chooseServerProgram, setupModel } from './firstRun';
import type { SendAction } from './input';
import type { AgentPanel, PanelRequest } from './panel';
import type { PermissionQuestions } from './permissionCard';
import type { ReviewController } from './review';
import type { ContextItem, MessageRef, RevertOutcome } from './protocol';
import { AgentServer, CHOOSE_SERVER } from './serverLifecycle';
import type { SessionController } from './sessions';
import type { SlashCommands } from './slashCommands';

/** What the panel's requests act on. */
export interface PanelHost {
  readonly sessions: SessionController;
  readonly panel: AgentPanel;
  readonly questions: PermissionQuestions;
  readonly review: ReviewController;
  readonly server: AgentServer;
  readonly slash: SlashCommands;
  readonly editors: EditorContext;
  /** The read-only texts the diff editor shows. */
  readonly before: BeforeContent;
  /** The panel's preferences per workspace (attach, while running). */
  readonly workspaceState: vscode.Memento;
  guarded<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
  send(text: string, action?: SendAction, extra?: ContextItem[], images?: ImageAttachment[]): Promise<MessageRef>;
  retryTurn(turn?: number): Promise<MessageRef>;
  revertTurn(turn?: number): Promise<RevertOutcome | undefined>;
  postPrefs(): void;
}

export async function handlePanelRequest(host: PanelHost, request: PanelRequest): Promise<void> {
  switch (request.type) {
    case 'ready':
      void host.server.refreshModel();
      host.postPrefs();
      host.editors.post();
      host.panel.post({ type: 'server', state: host.server.state, message: host.server.stateMessage || undefined, restart: host.server.restartLabel });
      host.panel.post(host.sessions.snapshot());
      host.panel.post({ type: 'permission', card: host.questions.card });
      void host.review.refresh(); // the changed files waiting for review
      break;
    case 'answerPermission':
      host.questions.answer(request.id, request.answer);
      break;
    case 'retryTurn':
      await host.guarded('send the message again', () => host.retryTurn(request.turn ?? undefined));
      break;
    case 'command':
      await vscode.commands.executeCommand(request.command);
      break;
    case 'send': {
      const images = request.images ?? [];
      const sent = await host.guarded('send the message', () => host.send(request.text, request.action, [], images));
      if (!sent) {
        host.panel.post({ type: 'insert', text: request.text }); // give the text back, not lose it
        if (images.length) {
          host.panel.post({ type: 'restoreImages', images }); // and the images, to remove or send again
        }
      }
      break;
    }
    case 'pickImage':
      await pickImages(host);
      break;
    case 'attachUris':
      await attachImageFiles(host, request.uris.map((u) => vscode.Uri.parse(u)));
      break;
    case 'loadImage':
      await loadImage(host, request.file);
      break;
    case 'openImage':
      await host.guarded('open the image', () => openImage(host, request.file));
      break;
    case 'slashItems':
      await host.slash.refresh();
      break;
    case 'slash': {
      const ran = await host.guarded(`run /${request.name}`, () => host.slash.run(request.name, request.rest));
      if (!ran) {
        host.panel.post({ type: 'insert', text: request.text }); // dismissed or refused: the typed line comes back
      }
      break;
    }
    case 'cancel':
      await host.guarded('cancel', () => host.sessions.cancel());
      break;
    case 'removeQueued':
      await host.guarded('remove the queued message', () => host.sessions.removeQueued(request.messageId));
      break;
    case 'revertTurn':
      await host.revertTurn(request.turn);
      break;
    case 'showDiff':
      await vscode.commands.executeCommand('agentLsp.showDiff', request.key);
      break;
    case 'review':
      if (request.action === 'open' && request.uri) {
        await vscode.window.showTextDocument(vscode.Uri.parse(request.uri), { preview: false });
      } else if (request.action === 'keep') {
        await vscode.commands.executeCommand('agentLsp.review.keepAll');
      } else if (request.action === 'undo') {
        const count = host.review.pending.length;
        const sure = await vscode.window.showWarningMessage(`Undo all ${count} agent change${count === 1 ? '' : 's'} waiting for review?`,
          { modal: true, detail: 'The agent is told you rejected them.' }, 'Undo All');
        if (sure === 'Undo All') {
          await vscode.commands.executeCommand('agentLsp.review.undoAll');
        }
      }
      break;
    case 'showPermissionDiff': {
      const diff = host.questions.diffOf(request.id);
      if (diff) {
        await showUnifiedDiff(diff, host.before);
      }
      break;
    }
    case 'restartServer':
      if (host.server.restartLabel === CHOOSE_SERVER) {
        await chooseServerProgram(); // the changed setting restarts the server
      } else {
        await host.server.restart();
      }
      break;
    case 'setupModel':
      await setupModel();
      break;
    case 'copyCode':
      await vscode.env.clipboard.writeText(request.text);
      break;
    case 'insertCode':
      await insertCode(host, request.text);
      break;
    case 'openLink':
      await openLink(host, request.href);
      break;
    case 'newSession':
      await host.guarded('start a new session', () => host.sessions.newSession());
      break;
    case 'resumeSession':
      await vscode.commands.executeCommand('agentLsp.resumeSession');
      break;
    case 'toggleAttach':
      await host.workspaceState.update('agentLsp.attach', request.on);
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
      await host.guarded('move the queued message', () => host.sessions.moveQueued(request.messageId, request.to, request.index));
      break;
    case 'pauseQueue':
      await host.guarded(request.paused ? 'pause the queue' : 'resume the queue', () => host.sessions.pauseQueue(request.paused));
      break;
    case 'pickModel':
      await host.guarded('switch the model', () => host.sessions.pickModel());
      break;
    case 'setPlanMode':
      await host.guarded('switch plan mode', () => host.sessions.setPlanMode(request.on));
      break;
    case 'openSubagent':
      await host.guarded("open the sub-agent's transcript", () => host.sessions.load(request.sessionId));
      break;
    case 'cancelSubagent':
      await host.guarded('stop the sub-agent', () => host.sessions.cancelSubagent(request.sessionId));
      break;
    case 'setWhileRunning':
      await host.workspaceState.update('agentLsp.whileRunning', request.mode);
      break;
    case 'pickFile': {
      const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git,.venv,__pycache__}/**', 2000);
      const picked = await vscode.window.showQuickPick(
        files.map((f) => vscode.workspace.asRelativePath(f)).sort(),
        { placeHolder: 'Attach a file to the message (@file)' },
      );
      if (picked) {
        host.panel.post({ type: 'insert', text: `@${picked} ` });
      }
      break;
    }
    default:
      break;
  }
}

/** A code block's "Insert": at the cursor (over the selection) of the editor the user last worked in. */
async function insertCode(host: PanelHost, text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? host.editors.lastEditor;
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

async function openLink(host: PanelHost, href: string): Promise<void> {
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
  const doc = await host.guarded('open the file', () => Promise.resolve(vscode.workspace.openTextDocument(uri)));
  if (doc) {
    const at = Math.max(0, Number(line) - 1 || 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(at, 0, at, 0) });
  }
}
