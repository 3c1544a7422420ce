// Token usage and estimated cost, as the turn footer of the panel shows them.
// The server sends each turn's `usage` and the session's `sessionUsage` on
// `turn/end`; `costUsd` is an estimate from list prices and is labelled so.

import type { Usage } from './transcript';

/** "~$0.0046" (or "~$1.23"): the estimate of a cost in US dollars. */
export function formatCost(usd: number): string {
  return `~$${usd >= 0.1 ? usd.toFixed(2) : usd.toFixed(4)}`;
}

/** The footer's cost part: " · ~$0.0046 est." for the turn, nothing when no price is known. */
export function costLabel(turn: Usage | null | undefined): string {
  return typeof turn?.costUsd === 'number' ? ` · ${formatCost(turn.costUsd)} est.` : '';
}

/** The footer's tooltip: the turn's tokens by kind, and the session's total so far. */
export function usageTooltip(turn: Usage | null | undefined, session: Usage | null | undefined): string {
  const n = (v: number | undefined) => (v ?? 0).toLocaleString('en-US');
  const lines: string[] = [];
  if (turn) {
    lines.push(`Tokens of this turn's model calls: ${n(turn.inputTokens)} in (${n(turn.cacheReadTokens)} from the prompt cache), ${n(turn.outputTokens)} out (${n(turn.reasoningTokens)} reasoning)`);
  }
  if (session) {
    const cost = typeof session.costUsd === 'number' ? `, ${formatCost(session.costUsd)}` : '';
    lines.push(`Session so far: ${n(session.inputTokens)} in, ${n(session.outputTokens)} out${cost}`);
  }
  const unpriced = [...(turn?.unpricedModels ?? []), ...(session?.unpricedModels ?? [])];
  if (unpriced.length) {
    lines.push(`No known price for ${[...new Set(unpriced)].join(', ')} (set model.prices)`);
  }
  if (typeof turn?.costUsd === 'number' || typeof session?.costUsd === 'number') {
    lines.push('Costs are estimates from list prices.');
  }
  return lines.join('\n');
}
