// What tells a user who looked away from VS Code (agentLsp.attention.notify):
// the line for a turn that ended, or for a question that waits. The wiring to
// VS Code (focus, the notification) is in attention.ts; this part has no
// `vscode` import, so unit tests run it in Node.

export interface AttentionEvent {
  type: string;
  data?: any;
}

const ENDINGS: Record<string, string> = {
  completed: 'finished',
  aborted: 'was cancelled',
  error: 'failed',
  interrupted: 'was interrupted',
  'max-steps': 'stopped at its step limit',
  'max-tokens': 'was cut at the output limit',
};

/** The line for the last turn that ended among live `events`, or undefined. */
export function turnEndLine(events: readonly AttentionEvent[]): string | undefined {
  const end = [...events].reverse().find((e) => e.type === 'turn/end');
  if (!end) {
    return undefined;
  }
  const reason = end.data?.reason;
  const kind: string = typeof reason === 'string' ? reason : reason?.kind ?? 'completed';
  const error = typeof reason === 'object' && reason?.error?.message ? `: ${reason.error.message}` : '';
  return `The agent's turn ${ENDINGS[kind] ?? `ended (${kind})`}${error}.`;
}

/** The line for a permission question that waits for the user. */
export function questionLine(title: string | undefined): string {
  const what = (title ?? '').replace(/\s+/g, ' ').trim();
  return what ? `The agent waits for you: ${what.length > 120 ? `${what.slice(0, 119)}…` : what}` : 'The agent waits for you.';
}
