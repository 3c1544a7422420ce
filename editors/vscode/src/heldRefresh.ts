// A session open in another window shows here as a read-only snapshot read
// from disk. While it is shown, its log is read on from where the snapshot
// ended (a replay page): every 3 s while a turn runs there, every 15 s
// otherwise. What that turn added is drawn as live events are; when a turn
// starts or ends there, or the other window lets the session go, the
// snapshot is read again (its banner says when), so the end of that turn
// shows here without reopening it.
import * as vscode from 'vscode';
import { HeldSnapshot, heldNeedsReload } from './sessionLock';
import type { SessionEvent } from './protocol';
import type { Requester } from './sessions';

export interface HeldView {
  readonly sessionId: string | null;
  readonly heldSnapshot: HeldSnapshot | null;
  reload(): Promise<void>;
  handleEvents(sessionId: string, events: SessionEvent[]): void;
}

export const RUNNING_PROBE_MS = 3000;
export const IDLE_PROBE_MS = 15000;

export class HeldRefresh implements vscode.Disposable {
  private readonly timer: ReturnType<typeof setInterval>;
  private waited = 0;
  private busy = false;

  constructor(private readonly view: HeldView, private readonly requester: () => Requester | null) {
    this.timer = setInterval(() => void this.tick(), RUNNING_PROBE_MS);
  }

  async tick(): Promise<void> {
    const snapshot = this.view.heldSnapshot;
    const sessionId = this.view.sessionId;
    const server = this.requester();
    if (this.busy || !snapshot || !sessionId || !server) {
      return;
    }
    this.waited += RUNNING_PROBE_MS;
    if (!snapshot.running && this.waited < IDLE_PROBE_MS) {
      return;
    }
    this.waited = 0;
    this.busy = true;
    try {
      const page = await server.request('agent/session/replay', { sessionId, seq: snapshot.endSeq, limit: 200 });
      if (this.view.sessionId !== sessionId || this.view.heldSnapshot !== snapshot) {
        return; // another session, or read again meanwhile
      }
      if (heldNeedsReload(snapshot, page)) {
        await this.view.reload();
      } else if (page.events?.length) {
        this.view.handleEvents(sessionId, page.events);
        snapshot.endSeq = page.nextSeq; // the rest, if any, at the next probe
      }
    } catch {
      // the server is gone or the session was deleted: the next load says so
    } finally {
      this.busy = false;
    }
  }

  dispose(): void {
    clearInterval(this.timer);
  }
}
