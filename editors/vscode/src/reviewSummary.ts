// The panel's summary of the agent's changes waiting for review
// (edits.review = "review"), as Copilot shows its changed files: each file
// with how many changes wait in it, and Keep all / Undo all. No `vscode`
// import: unit-tested in Node.

import type { PendingHunkInfo } from './protocol';

export interface ReviewFile {
  uri: string;
  /** The file's path as the panel shows it (relative to the workspace when it is in it). */
  label: string;
  changes: number;
}

/** The files of `hunks`, in the order of their first change, each with its count. */
export function reviewFiles(hunks: readonly PendingHunkInfo[], label: (uri: string) => string): ReviewFile[] {
  const files = new Map<string, ReviewFile>();
  for (const hunk of hunks) {
    const file = files.get(hunk.uri) ?? { uri: hunk.uri, label: label(hunk.uri), changes: 0 };
    file.changes += 1;
    files.set(hunk.uri, file);
  }
  return [...files.values()];
}

/** The summary's head line, e.g. "3 changes in 2 files wait for review". */
export function reviewHeadline(files: readonly ReviewFile[]): string {
  const changes = files.reduce((n, f) => n + f.changes, 0);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(changes, 'change')} in ${plural(files.length, 'file')} ${changes === 1 ? 'waits' : 'wait'} for review`;
}
