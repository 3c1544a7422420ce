// User hooks as the transcript shows them: each hook/run event (a hook that
// ran on a lifecycle point) is one collapsed line of the turn. No vscode
// import: the webview and the unit tests share it.

import type { HookRun } from './protocol';

export type HookOutcome = HookRun['outcome'];

export interface HookView {
  event: string;
  command: string;
  outcome: HookOutcome | string;
  message: string;
  source: string;
  origin: string;
  exitCode: number | null;
}

export function hookView(data: Record<string, any>): HookView {
  return {
    event: String(data?.event ?? '?'),
    command: String(data?.command ?? ''),
    outcome: String(data?.outcome ?? '?'),
    message: typeof data?.message === 'string' ? data.message : '',
    source: String(data?.source ?? 'user'),
    origin: String(data?.origin ?? 'settings'),
    exitCode: typeof data?.exitCode === 'number' ? data.exitCode : null,
  };
}

const OUTCOMES: Record<string, string> = { allowed: 'allowed', blocked: 'blocked', failed: 'failed', timeout: 'timed out' };

/** "hook PreToolUse · sh guard.sh · blocked: echo is not allowed here". */
export function hookLine(view: HookView): string {
  const outcome = OUTCOMES[view.outcome] ?? view.outcome;
  const why = view.message && view.outcome !== 'allowed' ? `: ${view.message.split('\n')[0]}` : '';
  return `hook ${view.event} · ${view.command} · ${outcome}${why}`;
}
