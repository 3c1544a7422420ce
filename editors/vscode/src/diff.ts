// "Show diff" for an agent edit: the tool result carries a unified diff; the
// text before the edit is recovered by applying that diff in reverse to the
// file as it is now, or, once the file no longer holds the edit (reverted,
// undone, edited again), both sides come from the diff alone (`diffSides`).

interface Hunk {
  oldStart: number; // 1-based
  newStart: number; // 1-based
  lines: string[]; // with their ' ', '+', '-' prefixes
}

export function parseHunks(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  let current: Hunk | null = null;
  const rows = diff.split('\n');
  if (rows.length && rows[rows.length - 1] === '') {
    rows.pop(); // the diff's own final newline
  }
  for (const line of rows) {
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (header) {
      current = { oldStart: Number(header[1]), newStart: Number(header[2]), lines: [] };
      hunks.push(current);
      continue;
    }
    if (!current || line.startsWith('\\')) {
      continue; // file headers before the first hunk; "\ No newline at end of file"
    }
    if (line.startsWith('+') || line.startsWith('-') || line.startsWith(' ')) {
      current.lines.push(line);
    } else if (line === '') {
      current.lines.push(' '); // a blank context line whose leading space was stripped
    } else {
      current = null; // e.g. the next file's "diff --git" header
    }
  }
  return hunks;
}

/** The text before the diff was applied, or null when `after` does not match the diff. */
export function reverseApply(after: string, diff: string): string | null {
  const hunks = parseHunks(diff);
  if (hunks.length === 0) {
    return null;
  }
  const lines = after.split('\n');
  for (let h = hunks.length - 1; h >= 0; h--) {
    const hunk = hunks[h];
    const newLines = hunk.lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1));
    const oldLines = hunk.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1));
    // A pure-deletion hunk at +N,0 sits after line N.
    const start = newLines.length === 0 ? hunk.newStart : hunk.newStart - 1;
    for (let i = 0; i < newLines.length; i++) {
      if (lines[start + i] !== newLines[i]) {
        return null;
      }
    }
    lines.splice(start, newLines.length, ...oldLines);
  }
  return lines.join('\n');
}

/** The lines around the edit before and after it, from the diff alone: each
 * hunk at its own line number (the lines between hunks, which the diff does
 * not hold, are left empty). Null when the diff has no hunk. */
export function diffSides(diff: string): { before: string; after: string } | null {
  const hunks = parseHunks(diff);
  if (hunks.length === 0) {
    return null;
  }
  const before: string[] = [];
  const after: string[] = [];
  for (const hunk of hunks) {
    const oldLines = hunk.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1));
    const newLines = hunk.lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1));
    // A hunk of no lines on a side (+N,0) sits after line N.
    const oldAt = oldLines.length ? hunk.oldStart - 1 : hunk.oldStart;
    const newAt = newLines.length ? hunk.newStart - 1 : hunk.newStart;
    while (before.length < oldAt) before.push('');
    while (after.length < newAt) after.push('');
    before.push(...oldLines);
    after.push(...newLines);
  }
  return { before: before.join('\n') + '\n', after: after.join('\n') + '\n' };
}
