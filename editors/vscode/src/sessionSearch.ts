// The session picker searches as the user types: past MIN_QUERY characters the
// text goes to the server (agent/session/list with a query, which searches the
// messages of every session, not only titles), and the sessions it finds are
// shown first, each with the message text that matched. The picker's own
// filter still narrows the rest of the list by title. No vscode import: the
// unit tests drive it with a stand-in for the quick pick.

import { SessionInfo } from './protocol';

/** What of a listed session the search shows. */
export type FoundSession = Pick<SessionInfo, 'sessionId' | 'excerpt'>;

/** What of a VS Code quick pick item this needs. */
export interface PickItem {
  label: string;
  detail?: string;
  alwaysShow?: boolean;
  sessionId: string;
}

/** What of a VS Code quick pick this needs. */
export interface SearchablePick<T extends PickItem> {
  value: string;
  items: readonly T[];
  busy: boolean;
  onDidChangeValue(listener: (value: string) => void): { dispose(): void };
}

export interface LiveSearch {
  /** A session deleted from the picker: not shown again when the query is cleared. */
  forget(sessionId: string): void;
  dispose(): void;
}

export const MIN_QUERY = 2;
export const SEARCH_DELAY_MS = 250;

/** A session found by its text: shown whatever the picker's own filter says, with the excerpt as its detail. */
export function foundItem<T extends PickItem>(item: T, session: FoundSession): T {
  const excerpt = session.excerpt ? ` · “${session.excerpt}”` : '';
  return { ...item, alwaysShow: true, detail: `${item.detail ?? ''}${excerpt}` };
}

/** The items to show for `found` (the server's answer) ahead of the listed ones it does not repeat. */
export function mergeFound<T extends PickItem>(
  listed: readonly T[],
  found: readonly FoundSession[],
): T[] {
  const byId = new Map(listed.map((item) => [item.sessionId, item]));
  const shown = new Set<string>();
  const first: T[] = [];
  for (const session of found) {
    const item = byId.get(session.sessionId);
    if (item && !shown.has(session.sessionId)) {
      shown.add(session.sessionId);
      first.push(foundItem(item, session));
    }
  }
  return [...first, ...listed.filter((item) => !shown.has(item.sessionId))];
}

/** Search the sessions' text as the quick pick's value changes; disposed with the quick pick. */
export function searchAsYouType<T extends PickItem>(
  quickPick: SearchablePick<T>,
  search: (query: string) => Promise<FoundSession[]>,
  delayMs = SEARCH_DELAY_MS,
): LiveSearch {
  let listed: readonly T[] = quickPick.items;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const changed = quickPick.onDidChangeValue((value) => {
    clearTimeout(timer);
    const query = value.trim();
    if (query.length < MIN_QUERY) {
      quickPick.items = listed;
      quickPick.busy = false;
      return;
    }
    timer = setTimeout(async () => {
      quickPick.busy = true;
      try {
        const found = await search(query);
        if (quickPick.value.trim() === query) {
          quickPick.items = mergeFound(listed, found);
        }
      } catch {
        quickPick.items = listed; // the titles are still there to filter
      } finally {
        if (quickPick.value.trim() === query) {
          quickPick.busy = false;
        }
      }
    }, delayMs);
  });
  return {
    forget(sessionId: string) {
      listed = listed.filter((item) => item.sessionId !== sessionId);
    },
    dispose() {
      clearTimeout(timer);
      changed.dispose();
      listed = [];
    },
  };
}
