// The session's model as the panel shows it and the model picker offers it
// (agent/model/list, agent/session/setModel, session/model events).
// No vscode import: the webview and the unit tests share it.

import type { ModelChoice, SessionSetModelParams } from './protocol';

export const EFFORTS = ['minimal', 'low', 'medium', 'high'] as const satisfies readonly NonNullable<SessionSetModelParams['effort']>[];
export type Effort = (typeof EFFORTS)[number];

/** "openai / gpt-4o": how the panel header names a model. */
export function modelName(provider: unknown, model: unknown): string {
  return [provider, model].filter((p) => typeof p === 'string' && p).join(' / ');
}

/** A quick-pick entry for a model: the name, then where it comes from and its window. */
export function modelPick(choice: ModelChoice, current: string | null): { label: string; description: string } {
  const window = choice.contextWindow ? ` · ${Math.round(choice.contextWindow / 1000)}k tokens` : '';
  const now = modelName(choice.provider, choice.model) === current ? ' · current' : '';
  return { label: choice.model, description: `${choice.provider} · ${choice.source}${window}${now}` };
}

/** The transcript's line for a session/model event. */
export function modelNotice(data: Record<string, any>): string {
  const effort = data?.effort ? `, effort ${data.effort}` : '';
  return `Model: ${modelName(data?.provider, data?.model)}${effort} from the next step (was ${data?.previousModel ?? '?'}).`;
}
