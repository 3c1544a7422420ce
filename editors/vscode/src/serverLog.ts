// The server's stderr in the "agent_lsp" log: each line at the level the
// server logged it at ("… WARNING agent_lsp.x: …" is a warning, not an error).
// A line without a level (a traceback's next lines) keeps the level of the
// line before it.

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  WARN: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

// "2026-12-07 21:00:00,123 WARNING agent_lsp.llm: …"
const LEVEL = /^\d{4}-\d\d-\d\d[ T][\d:.,]+ (DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) /;

/** A reader of stderr lines: the level of each, given the ones before it. */
export function stderrLevels(): (line: string) => LogLevel {
  let last: LogLevel = 'error'; // anything unannounced on stderr (a crash) is an error
  return (line) => {
    const m = LEVEL.exec(line);
    if (m) {
      last = LEVELS[m[1]];
    }
    return last;
  };
}
