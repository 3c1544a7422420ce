// Sub-agents as the transcript and the panel show them: a `subagent` tool
// call is a card with the child session's live status (subagent/start, the
// live agent/subagent/status, then the result's meta.subagent) from which its
// own transcript opens. No vscode import: the webview and the unit tests share it.

import type { SessionInfo, SubagentStatusParams } from './protocol';

export const SUBAGENT_TOOL = 'subagent';

export type SubagentStatus = SubagentStatusParams['status'];

export interface SubagentView {
  callId: string;
  childSessionId: string;
  description: string;
  agentType?: string;
  status: SubagentStatus;
  usage?: { inputTokens?: number; outputTokens?: number };
}

function statusOf(value: unknown): SubagentStatus {
  return value === 'completed' || value === 'cancelled' || value === 'failed' ? value : 'running';
}

/** From a subagent/start event, an agent/subagent/status notification or a result's meta.subagent. */
export function subagentView(callId: string, data: Record<string, any>, before?: SubagentView): SubagentView {
  return {
    callId,
    childSessionId: String(data.childSessionId ?? data.sessionId ?? before?.childSessionId ?? ''),
    description: String(data.description ?? before?.description ?? ''),
    ...((data.agentType ?? before?.agentType) ? { agentType: String(data.agentType ?? before?.agentType) } : {}),
    status: data.status === undefined && before ? before.status : statusOf(data.status),
    ...((data.usage ?? before?.usage) ? { usage: data.usage ?? before?.usage } : {}),
  };
}

/** "running", "completed · 34 in / 9 out". */
export function subagentLabel(view: SubagentView): string {
  const usage = view.usage && view.status !== 'running' ? ` · ${view.usage.inputTokens ?? 0} in / ${view.usage.outputTokens ?? 0} out` : '';
  return `${view.status}${usage}`;
}

/** Sessions (newest first) with each sub-agent's session moved right under its
 * parent's, marked with its depth; a child whose parent is not listed stays where it is. */
export function nestSessions<T extends Pick<SessionInfo, 'sessionId' | 'parentSessionId' | 'parentToolCallId'>>(sessions: T[]): { session: T; depth: number }[] {
  const listed = new Set(sessions.map((s) => s.sessionId));
  const isChild = (s: T) => !!s.parentToolCallId && !!s.parentSessionId && listed.has(s.parentSessionId) && s.parentSessionId !== s.sessionId;
  const children = new Map<string, T[]>();
  for (const s of sessions.filter(isChild)) {
    children.set(s.parentSessionId!, [...(children.get(s.parentSessionId!) ?? []), s]);
  }
  const out: { session: T; depth: number }[] = [];
  const seen = new Set<string>();
  const add = (s: T, depth: number) => {
    if (seen.has(s.sessionId)) {
      return;
    }
    seen.add(s.sessionId);
    out.push({ session: s, depth });
    for (const child of children.get(s.sessionId) ?? []) {
      add(child, depth + 1);
    }
  };
  for (const s of sessions) {
    if (!isChild(s)) {
      add(s, 0);
    }
  }
  return out;
}
