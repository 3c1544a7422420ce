// A stored session's log in pages (agent/session/replay), oldest first, each
// page in seq order with streamed deltas merged: the form live notifications
// take under load, so the transcript reducer draws a page as it draws live
// events. A server without agent/session/replay gives the whole log in one
// agent/session/load answer, as one page.

import { AgentStatus, SessionEvent, SessionLoadResult, SessionReplayResult } from './protocol';
import type { Requester } from './sessions';

/** Events asked for per page. */
export const PAGE = 200;
const METHOD_NOT_FOUND = -32601;

export async function* replayPages(requester: Requester, sessionId: string, limit = PAGE): AsyncGenerator<SessionReplayResult> {
  let seq = 0;
  for (;;) {
    let page: SessionReplayResult;
    try {
      page = await requester.request('agent/session/replay', { sessionId, seq, limit });
    } catch (error) {
      if (seq === 0 && (error as { code?: number } | null)?.code === METHOD_NOT_FOUND) {
        yield asOnePage(await requester.request('agent/session/load', { sessionId }));
        return;
      }
      throw error;
    }
    yield page;
    if (page.nextSeq >= page.endSeq) {
      return;
    }
    seq = page.nextSeq;
  }
}

function asOnePage(loaded: SessionLoadResult): SessionReplayResult {
  const events = loaded.events ?? [];
  const end = events.length ? events[events.length - 1].seq + 1 : 0;
  return { ...loaded, events, startSeq: 0, nextSeq: end, endSeq: end };
}

/** What arrives live for a session while its pages are read. Its events wait
 * until the last page is in. A status notification is newer than the pages
 * answered before it and older than those answered after it (both come on the
 * one stream, in order), so a page forgets the status held so far, and the
 * status held at the end, if any, wins over the last page's. */
export class ReplayHold {
  readonly events: SessionEvent[] = [];
  private status: AgentStatus | undefined;

  constructor(readonly sessionId: string) {}

  statusChanged(status: AgentStatus): void {
    this.status = status;
  }

  pageArrived(): void {
    this.status = undefined;
  }

  /** The session's status once the last page (that said `pageStatus`) is in. */
  finalStatus(pageStatus: AgentStatus | undefined): AgentStatus | undefined {
    return this.status ?? pageStatus;
  }
}
