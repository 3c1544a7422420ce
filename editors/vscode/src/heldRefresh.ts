// A session open in another window shows here as a read-only snapshot read
// from disk. While it is shown, its log is probed (one tiny replay page):
// every 3 s while a turn runs there, every 15 s otherwise; when it changed
// (a turn went on or ended, or the other window let it go) the snapshot is
// read again, so the end of that turn shows here without reopening it.
import * as vscode from 'vscode';
import { HeldSnapshot, heldChanged } from './sessionLock';
import type { Requester } from './sessions';

export interface HeldView {
  readonly sessionId: string | null;
  readonly heldSnapshot: HeldSnapshot | null;
  reload(): Promise<void>;
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
      const probe = await server.request('agent/session/replay', { sessionId, seq: snapshot.endSeq, limit: 1 });
      if (this.view.sessionId === sessionId && heldChanged(snapshot, probe)) {
        await this.view.reload();
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
