// Plan mode and the plan, as the transcript and the panel show them: the
// checklist the agent keeps with todo_write (plan/update events) and the
// session's permission mode (session/mode events, switched with
// agent/session/mode). No vscode import: the webview and the unit tests share it.

import type { PlanItem, SessionMode } from './protocol';

export type PermissionMode = SessionMode['mode'];

export type PlanStatus = PlanItem['status'];

export interface PlanEntry {
  content: string;
  status: PlanStatus;
  priority?: string;
}

/** The entries of a plan/update event (anything malformed left out). */
export function planEntries(data: Record<string, any>): PlanEntry[] {
  const items = Array.isArray(data?.items) ? data.items : [];
  return items
    .filter((x: any) => x && typeof x.content === 'string')
    .map((x: any) => ({
      content: x.content,
      status: x.status === 'completed' || x.status === 'in_progress' ? x.status : 'pending',
      ...(typeof x.priority === 'string' ? { priority: x.priority } : {}),
    }));
}

/** "1 of 3 done". */
export function planProgress(entries: PlanEntry[]): string {
  return `${entries.filter((e) => e.status === 'completed').length} of ${entries.length} done`;
}

/** The line a session/mode event shows in the transcript. */
export function modeNotice(data: Record<string, any>): string {
  if (data?.mode === 'plan') {
    return 'Plan mode on: the agent reads and plans; edits and commands are refused.';
  }
  return data?.carriedPlan ? 'Plan mode off: the plan goes to the agent with your next message.' : 'Plan mode off.';
}

export function modeOf(value: unknown): PermissionMode {
  return value === 'plan' ? 'plan' : 'default';
}
