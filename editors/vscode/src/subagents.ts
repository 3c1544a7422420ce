// Sub-agents as the transcript and the panel show them: a `subagent` tool
// call is a card with the child session's live status (subagent/start, the
// live agent/subagent/status, then the result's meta.subagent) from which its
// own transcript opens. No vscode import: the webview and the unit tests share it.

export const SUBAGENT_TOOL = 'subagent';

export type SubagentStatus = 'running' | 'completed' | 'cancelled' | 'failed';

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
