// The window's current agent session: which one it is (kept across reloads),
// its transcript (the same reducer the webview runs), and the requests that
// act on it. Events for other sessions are ignored; a hole in the event
// sequence reloads the session from the server. A stored session is shown
// page by page (agent/session/replay, replay.ts).

import * as vscode from 'vscode';
import { Batcher } from './batcher';
import {
  AgentStatus,
  ContextItem,
  FollowupParams,
  McpServerStatus,
  MessageRef,
  Request,
  RevertOutcome,
  SessionEvent,
  SessionInfo,
  SessionReplayResult,
  SessionRewindResult,
  SkillInfo,
  endSeq,
} from './protocol';
import { SendAction, methodFor } from './input';
import { HeldBy, HeldSnapshot, SESSION_IN_USE, heldByOf, heldNotice, sessionInUse } from './sessionLock';
import { Transcript, applyEvents, applySubagentStatus, applyToolProgress, createTranscript, loadTranscript } from './transcript';
import { PAGE, ReplayHold, replayPages } from './replay';
import { ModelSwitch, chooseModel } from './modelPicker';

const SESSION_KEY = 'agentLsp.sessionId';
const REVERTS_KEY = (sessionId: string) => `agentLsp.reverts.${sessionId}`;

/** The running server's typed requests. */
export interface Requester {
  request: Request;
}

/** What the panel is told; it keeps its own transcript from these. */
export type ViewMessage =
  | { type: 'reset'; sessionId: string | null; events: SessionEvent[]; status: AgentStatus; inbox: Transcript['inbox']; reverts: Record<number, RevertOutcome>; readOnly: string | null; roots: string[] }
  | { type: 'reverted'; turn: number; outcome: RevertOutcome }
  | { type: 'events'; events: SessionEvent[] }
  | { type: 'status'; status: AgentStatus }
  | { type: 'progress'; callId: string; data: Record<string, any> }
  | { type: 'subagent'; params: Record<string, any> };

/** Thrown instead of sending to a session another process holds (same code as the server's answer). */
export class SessionInUseError extends Error {
  readonly code = SESSION_IN_USE;
  readonly data: { sessionId: string | null; pid: number | null };
  constructor(held: HeldBy) {
    super(heldNotice(held.pid));
    this.data = { sessionId: held.sessionId, pid: held.pid };
  }
}

export class SessionController implements vscode.Disposable {
  private transcriptState: Transcript = createTranscript();
  /** Set while the shown session is open in another agent-lsp process (read-only here). */
  private held: HeldBy | null = null;
  /** When the held session was read, how far its log went, whether a turn ran there. */
  heldSnapshot: HeldSnapshot | null = null;
  private events: SessionEvent[] = [];
  private readonly batcher: Batcher<SessionEvent>;
  private readonly statusEmitter = new vscode.EventEmitter<AgentStatus>();
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  private reloading: Promise<void> | null = null;
  /** Events per replayed page (agent/session/replay's limit). */
  pageSize = PAGE;
  /** Set while a session's pages are being replayed: its live events wait here. */
  private paging: ReplayHold | null = null;
  readonly onDidChangeStatus = this.statusEmitter.event;
  /** Fires after the transcript changed (batched with the view). */
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    private readonly memento: vscode.Memento,
    private readonly server: () => Requester | null,
    private readonly post: (message: ViewMessage) => void,
  ) {
    this.batcher = new Batcher<SessionEvent>((events) => {
      this.post({ type: 'events', events });
      this.changeEmitter.fire();
    });
  }

  get sessionId(): string | null {
    return this.transcriptState.sessionId;
  }

  get transcript(): Transcript {
    return this.transcriptState;
  }

  get status(): AgentStatus {
    return this.transcriptState.status;
  }

  /** The other process holding the shown session, or null when it is ours to change. */
  get heldBy(): HeldBy | null {
    return this.held;
  }

  /** The server refused a change (-32010): show the session read-only from now on. */
  markHeld(held: HeldBy): void {
    if (!this.transcriptState.sessionId || (held.sessionId && held.sessionId !== this.transcriptState.sessionId)) {
      return; // about another session (e.g. deleting one from the list): nothing shown changes
    }
    this.held = { sessionId: this.transcriptState.sessionId, pid: held.pid };
    this.post(this.snapshot());
    this.changeEmitter.fire();
  }

  /** The session stored for this workspace, to resume after a reload. */
  get storedSessionId(): string | null {
    return this.memento.get<string>(SESSION_KEY) ?? null;
  }

  private requester(): Requester {
    const server = this.server();
    if (!server) {
      throw new Error('the agent_lsp server is not running: start it with "Agent: Restart Server"');
    }
    return server;
  }

  /** A full snapshot for a (re)loaded webview. */
  snapshot(): ViewMessage {
    this.batcher.flush();
    return {
      type: 'reset',
      sessionId: this.transcriptState.sessionId,
      events: this.events,
      status: this.transcriptState.status,
      inbox: this.transcriptState.inbox,
      reverts: this.reverts,
      readOnly: this.held ? heldNotice(this.held.pid, this.heldSnapshot) : null,
      roots: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    };
  }

  /** What the server answered to each "Revert this turn" of this session
   * (kept in the workspace state: the session log does not record it). */
  get reverts(): Record<number, RevertOutcome> {
    const sessionId = this.transcriptState.sessionId;
    return sessionId ? this.memento.get<Record<number, RevertOutcome>>(REVERTS_KEY(sessionId)) ?? {} : {};
  }

  /** Show this session; resolves once it is remembered for this workspace. */
  private adopt(state: Transcript, events: SessionEvent[], held: HeldBy | null = null): Promise<void> {
    this.batcher.clear();
    this.held = held;
    this.transcriptState = state;
    this.events = events;
    const stored = this.memento.update(SESSION_KEY, state.sessionId ?? undefined);
    this.post(this.snapshot());
    this.statusEmitter.fire(state.status);
    this.changeEmitter.fire();
    return Promise.resolve(stored);
  }

  // ------------------------------------------------------------ server → us

  handleEvents(sessionId: string, events: SessionEvent[]): void {
    if (this.paging && sessionId === this.paging.sessionId) {
      this.paging.events.push(...events); // drawn after the replay's last page
      return;
    }
    if (sessionId !== this.transcriptState.sessionId || this.reloading) {
      return;
    }
    this.apply(events);
  }

  /** Events of the shown session, live or replayed, to the transcript and the view. */
  private apply(events: SessionEvent[]): void {
    const { gap } = applyEvents(this.transcriptState, events);
    if (gap) {
      void this.reload();
      return;
    }
    const seen = this.events.length ? endSeq(this.events[this.events.length - 1]) : -1;
    const fresh = events.filter((e) => e.seq > seen);
    this.events.push(...fresh);
    this.batcher.push(...fresh);
  }

  handleStatus(sessionId: string, status: AgentStatus): void {
    if (this.paging && sessionId === this.paging.sessionId) {
      this.paging.statusChanged(status); // shown with the replay's last page, unless a later page says otherwise
      return;
    }
    if (sessionId !== this.transcriptState.sessionId) {
      return;
    }
    this.batcher.flush();
    this.transcriptState.status = status;
    this.post({ type: 'status', status });
    this.statusEmitter.fire(status);
    this.changeEmitter.fire();
  }

  /** The server died: a running turn ends here, interrupted, with what it streamed
   * kept (the restarted server's repair of the log says the same on reload).
   * True when a turn was running. */
  serverStopped(): boolean {
    const sessionId = this.transcriptState.sessionId;
    if (!sessionId || this.transcriptState.status !== 'running') {
      return false;
    }
    this.paging = null; // a replay in flight fails with the server: what follows is shown, not held
    this.batcher.flush();
    const last = this.events.length ? endSeq(this.events[this.events.length - 1]) : -1;
    const turn = this.transcriptState.turnOpen;
    this.handleEvents(sessionId, [{ seq: last + 1, time: Date.now(), type: 'turn/end', data: { turn, reason: { kind: 'interrupted' } } } as SessionEvent]);
    this.handleStatus(sessionId, 'idle');
    return true;
  }

  handleToolProgress(sessionId: string, callId: string, data: Record<string, any>): void {
    if (sessionId !== this.transcriptState.sessionId) {
      return;
    }
    this.batcher.flush();
    applyToolProgress(this.transcriptState, callId, data);
    this.post({ type: 'progress', callId, data });
  }

  /** agent/subagent/status of the shown session (a sub-agent's card). */
  handleSubagentStatus(sessionId: string, params: Record<string, any>): void {
    if (sessionId !== this.transcriptState.sessionId) {
      return;
    }
    this.batcher.flush();
    applySubagentStatus(this.transcriptState, params);
    this.post({ type: 'subagent', params });
    this.changeEmitter.fire();
  }

  // ------------------------------------------------------------ us → server

  /** Switch the shown session into or out of plan mode (the server records it;
   * the transcript follows from the session/mode event). */
  async setPlanMode(on: boolean): Promise<void> {
    const sessionId = await this.ensureSession();
    await this.requester().request('agent/session/mode', { sessionId, mode: on ? 'plan' : 'default' });
  }

  /** Switch the shown session's model from its next step on (the server
   * records it; the transcript follows from the session/model event). */
  async setModel(choice: ModelSwitch): Promise<void> {
    const sessionId = await this.ensureSession();
    await this.requester().request('agent/session/setModel', { sessionId, ...choice });
  }

  /** Ask the user for a model of the shown session (the panel header's picker). */
  async pickModel(): Promise<ModelSwitch | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    const choice = await chooseModel(this.requester(), folder, this.transcriptState.model);
    if (choice) {
      await this.setModel(choice);
    }
    return choice;
  }

  /** Fork the shown session at the end of `turn` and show the new session. */
  async fork(turn: number): Promise<string> {
    const sessionId = this.requireSession();
    const { sessionId: forked } = await this.requester().request('agent/session/fork', { sessionId, turn });
    await this.load(forked);
    return forked;
  }

  /** Cut the shown session's history back to before `turn` (and its files, with `revertFiles`). */
  async rewind(turn: number, revertFiles: boolean): Promise<SessionRewindResult> {
    const sessionId = this.requireSession();
    return this.requester().request('agent/session/rewind', { sessionId, turn, revertFiles });
  }

  /** Replace a queued message's text. */
  async editQueued(messageId: string, content: string): Promise<boolean> {
    const { updated } = await this.requester().request('agent/inbox/update', { sessionId: this.requireSession(), messageId, content });
    return updated;
  }

  /** Move a queued message: within the queue (`index`), into the running turn, or to run now. */
  async moveQueued(messageId: string, to: 'next-turn' | 'next-step' | 'now', index?: number): Promise<boolean> {
    const params = { sessionId: this.requireSession(), messageId, to, ...(index != null ? { index } : {}) };
    const { moved } = await this.requester().request('agent/inbox/move', params);
    return moved;
  }

  /** Pause or resume the shown session's queue. */
  async pauseQueue(paused: boolean): Promise<void> {
    await this.requester().request('agent/inbox/pause', { sessionId: this.requireSession(), paused });
  }

  private requireSession(): string {
    const sessionId = this.transcriptState.sessionId;
    if (!sessionId) {
      throw new Error('no session');
    }
    return sessionId;
  }

  /** Cancel one running sub-agent alone. */
  async cancelSubagent(childSessionId: string): Promise<void> {
    await this.requester().request('agent/subagent/cancel', { sessionId: childSessionId });
  }

  async newSession(): Promise<string> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    const { sessionId } = await this.requester().request('agent/session/new', folder ? { workspaceUri: folder } : {});
    await this.adopt(createTranscript(sessionId), []);
    return sessionId;
  }

  /** Show a stored session page by page (the first page replaces what was
   * shown, later ones are applied as live events are); live events of the
   * session that arrive meanwhile wait until the last page is in. */
  async load(sessionId: string): Promise<void> {
    const paging = new ReplayHold(sessionId);
    this.paging = paging;
    let last: SessionReplayResult | null = null;
    try {
      for await (const page of replayPages(this.requester(), sessionId, this.pageSize)) {
        paging.pageArrived();
        const events = page.events ?? [];
        if (!last) {
          const id = page.sessionId ?? sessionId;
          const held = heldByOf(id, page);
          this.heldSnapshot = held ? { asOf: Date.now(), endSeq: page.endSeq, running: page.status === 'running' } : null;
          await this.adopt(loadTranscript(id, events, page.status ?? 'idle', page.inbox), [...events], held);
        } else {
          this.apply(events);
        }
        last = page;
      }
    } finally {
      if (this.paging === paging) {
        this.paging = null;
      }
    }
    if (last && this.transcriptState.sessionId === (last.sessionId ?? sessionId)) {
      this.apply(paging.events);
      const status = paging.finalStatus(last.status);
      if (status && status !== this.transcriptState.status) {
        this.handleStatus(this.transcriptState.sessionId, status as AgentStatus);
      }
    }
  }

  /** Re-read the current session (after a hole in the events or a server restart). */
  reload(): Promise<void> {
    const sessionId = this.transcriptState.sessionId;
    if (!sessionId) {
      return Promise.resolve();
    }
    this.reloading ??= this.load(sessionId).finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** Resume the stored session, or start clean when it is gone. */
  async restore(): Promise<void> {
    const stored = this.storedSessionId;
    if (!stored) {
      await this.adopt(createTranscript(), []);
      return;
    }
    try {
      await this.load(stored);
    } catch {
      await this.adopt(createTranscript(), []);
    }
  }

  async ensureSession(): Promise<string> {
    return this.transcriptState.sessionId ?? (await this.newSession());
  }

  async send(action: SendAction, text: FollowupParams['content'], context: ContextItem[]): Promise<MessageRef> {
    if (this.held) {
      throw new SessionInUseError(this.held); // the server would refuse it: say why without asking
    }
    const sessionId = await this.ensureSession();
    const params = { sessionId, content: text, ...(context.length ? { context } : {}) };
    return this.requester().request(methodFor(action), params);
  }

  async cancel(): Promise<void> {
    const sessionId = this.transcriptState.sessionId;
    if (sessionId) {
      await this.requester().request('agent/cancel', { sessionId });
    }
  }

  async removeQueued(messageId: string): Promise<boolean> {
    const sessionId = this.transcriptState.sessionId;
    if (!sessionId) {
      return false;
    }
    const { removed } = await this.requester().request('agent/inbox/remove', { sessionId, messageId });
    return removed;
  }

  /** The workspace's sessions; with `query`, those whose title or message text has its words. */
  async list(query?: string): Promise<SessionInfo[]> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    const params = { ...(folder ? { workspaceUri: folder } : {}), ...(query ? { query } : {}) };
    const { sessions } = await this.requester().request('agent/session/list', params);
    return sessions ?? [];
  }

  /** The workspace's skills (agent/skill/list). */
  async skills(): Promise<SkillInfo[]> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    const { skills } = await this.requester().request('agent/skill/list', folder ? { workspaceUri: folder } : {});
    return skills ?? [];
  }

  /** Run a skill in this session (a new one if there is none): its instructions, then `text`, as the user's message. */
  async runSkill(name: string, text?: string): Promise<MessageRef> {
    if (this.held) {
      throw new SessionInUseError(this.held);
    }
    const sessionId = await this.ensureSession();
    return this.requester().request('agent/skill/run', { sessionId, name, ...(text ? { arguments: text } : {}) });
  }

  /** The workspace's MCP servers and their state (agent/mcp/list). */
  async mcpServers(): Promise<McpServerStatus[]> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    const { servers } = await this.requester().request('agent/mcp/list', folder ? { workspaceUri: folder } : {});
    return servers ?? [];
  }

  async delete(sessionId: string): Promise<boolean> {
    const { deleted } = await this.requester().request('agent/session/delete', { sessionId });
    if (deleted) {
      void this.memento.update(REVERTS_KEY(sessionId), undefined);
    }
    if (deleted && sessionId === this.transcriptState.sessionId) {
      await this.adopt(createTranscript(), []);
    }
    return deleted;
  }

  async compact(): Promise<boolean> {
    const sessionId = this.transcriptState.sessionId;
    if (!sessionId) {
      return false;
    }
    const { compacted } = await this.requester().request('agent/session/compact', { sessionId });
    return compacted;
  }

  /** Ask the server to revert a turn; the panel shows its answer under the
   * turn (paths relative to the workspace). */
  async revertTurn(turn: number): Promise<RevertOutcome> {
    const sessionId = this.transcriptState.sessionId;
    if (!sessionId) {
      throw new Error('no session');
    }
    let outcome: RevertOutcome;
    try {
      const result = await this.requester().request('agent/turn/revert', { sessionId, turn });
      const rel = (p: string) => vscode.workspace.asRelativePath(p.startsWith('file:') ? vscode.Uri.parse(p) : vscode.Uri.file(p));
      outcome = { reverted: (result?.reverted ?? []).map(rel), skipped: (result?.skipped ?? []).map((x) => ({ path: rel(x.path), reason: x.reason })) };
    } catch (error) {
      if (sessionInUse(error)) {
        throw error; // not an outcome of this turn: the session is read-only here (the caller explains)
      }
      outcome = { reverted: [], skipped: [], error: error instanceof Error ? error.message : String(error) };
    }
    if (sessionId === this.transcriptState.sessionId) {
      await this.memento.update(REVERTS_KEY(sessionId), { ...this.reverts, [turn]: outcome });
      this.post({ type: 'reverted', turn, outcome });
    }
    return outcome;
  }

  dispose(): void {
    this.statusEmitter.dispose();
    this.changeEmitter.dispose();
  }
}
