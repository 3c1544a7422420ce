// A session open in another agent-lsp process (another window on the same
// folder) is read-only here: the server answers its load with `heldByPid` and
// fails every request that would change it with JSON-RPC -32010. Pure, so it
// is tested without VS Code.

import { SESSION_IN_USE_CODE } from './protocol.generated';

export const SESSION_IN_USE = SESSION_IN_USE_CODE;

/** Who holds a session: the other process's pid (null when unknown). */
export interface HeldBy {
  sessionId: string | null;
  pid: number | null;
}

function knownPid(pid: unknown): number | null {
  return typeof pid === 'number' && pid > 0 ? pid : null;
}

/** The holder named by a -32010 error (a vscode-languageclient ResponseError
 * or anything with `code` and `data`), or null for any other error. */
export function sessionInUse(error: unknown): HeldBy | null {
  if (!error || typeof error !== 'object' || (error as { code?: unknown }).code !== SESSION_IN_USE) {
    return null;
  }
  const data = ((error as { data?: unknown }).data ?? {}) as { sessionId?: unknown; pid?: unknown };
  return { sessionId: typeof data.sessionId === 'string' ? data.sessionId : null, pid: knownPid(data.pid) };
}

/** The holder named by an agent/session/load answer, or null when this process may change it. */
export function heldByOf(sessionId: string, result: { heldByPid?: number | null }): HeldBy | null {
  return result.heldByPid == null ? null : { sessionId, pid: knownPid(result.heldByPid) };
}

/** What was read of a held session: when, how far its log went, and whether a turn ran there. */
export interface HeldSnapshot {
  asOf: number; // epoch ms
  endSeq: number;
  running: boolean;
}

function clock(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** The one explanation shown in the panel banner and in the message; with the
 * snapshot, when it was read and whether a turn runs there. */
export function heldNotice(pid: number | null, snapshot?: HeldSnapshot | null): string {
  const where = pid ? `another window (pid ${pid})` : 'another window';
  if (!snapshot) {
    return `This session is open in ${where} — read-only; start a new session to continue.`;
  }
  const running = snapshot.running ? ', where a turn is running: this view follows it every few seconds' : '';
  return `A snapshot as of ${clock(snapshot.asOf)} of a session open in ${where}${running} — read-only; start a new session to continue.`;
}

/** Whether a probe of the held session's log (a replay page from where the
 * snapshot ended) calls for reading it again: a turn started or ended there,
 * or the other window let it go. Events it only added are applied as they come. */
export function heldNeedsReload(snapshot: HeldSnapshot, probe: { status?: string; heldByPid?: number | null }): boolean {
  return (probe.status === 'running') !== snapshot.running || probe.heldByPid == null;
}
