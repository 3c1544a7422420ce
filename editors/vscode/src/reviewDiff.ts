// What the review shows of a pending change besides its highlighted lines:
// what they replaced (a hover), the lines it deleted (a note where they
// were), and the file's text before its pending changes (the left side of
// "Show diff", VS Code's diff editor). No `vscode` import: unit-tested in Node.

import type { PendingHunkInfo } from './protocol';

function lines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

/** `text` with each pending hunk's lines put back as they were: the file before
 * the agent's changes that wait for review (the hunks' ranges are in `text`). */
export function textBeforeHunks(text: string, hunks: readonly PendingHunkInfo[]): string {
  const out = lines(text);
  for (const hunk of [...hunks].sort((a, b) => b.range.start.line - a.range.start.line)) {
    out.splice(hunk.range.start.line, hunk.range.end.line - hunk.range.start.line, ...lines(hunk.oldText));
  }
  return out.join('');
}

function fenced(text: string): string {
  const fence = text.includes('```') ? '````' : '```';
  return `${fence}\n${text.replace(/\n$/, '')}\n${fence}`;
}

/** The hover of a pending change (Markdown): the lines it replaced, if any. */
export function replacedMarkdown(hunk: PendingHunkInfo): string {
  const head = `**Agent change** (turn ${hunk.turn}), waiting for review`;
  if (hunk.oldText === '') {
    return `${head}: added lines.`;
  }
  const what = hunk.newText === '' ? 'deleted' : 'replaced';
  return `${head}. It ${what}:\n\n${fenced(hunk.oldText)}`;
}

/** The note drawn where a change only deleted lines (nothing is left to highlight), else null. */
export function deletedNote(hunk: PendingHunkInfo): string | null {
  if (hunk.newText !== '' || hunk.oldText === '') {
    return null;
  }
  const gone = lines(hunk.oldText);
  const first = gone[0].trim();
  const shown = first.length > 60 ? `${first.slice(0, 59)}…` : first;
  return ` ⌫ the agent deleted ${gone.length} line${gone.length === 1 ? '' : 's'}: ${shown}${gone.length > 1 ? ' …' : ''}`;
}
