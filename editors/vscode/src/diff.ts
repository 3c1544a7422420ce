// "Show diff" for an agent edit: the tool result carries a unified diff; the
// text before the edit is recovered by applying that diff in reverse to the
// file as it is now.

interface Hunk {
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
    const header = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (header) {
      current = { newStart: Number(header[1]), lines: [] };
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
