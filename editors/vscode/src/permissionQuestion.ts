// The words of a permission question: what exactly the agent wants to do.

import { PermissionAnswer, PermissionParams } from './protocol';

const ALL_ANSWERS: PermissionAnswer[] = ['once', 'session', 'always', 'deny'];

export function permissionQuestion(params: PermissionParams): { message: string; detail: string; answers: PermissionAnswer[]; diff?: string } {
  const subject = params.command ?? params.path;
  const verb: Record<string, string> = { command: 'run', read: 'read', write: 'write', delete: 'delete' };
  // Without a command or path (an MCP tool), the title says it, verb included.
  const action = subject ? `${verb[params.kind] ?? params.kind} ${subject}` : params.title.replace(/^./, (c) => c.toLowerCase());
  const message = `The agent wants to ${action}`;
  // Only what the message does not say already (the title usually is "Run `<command>`").
  const says = (line: string) => [subject ?? action, action].includes(line.replace(/`/g, '').replace(/^./, (c) => c.toLowerCase()));
  const lines = [params.title, params.detail ?? ''].filter((line, i, all) => line && !says(line) && all.indexOf(line) === i);
  const why = params.asksEveryTime ? [params.asksEveryTime] : [];
  // Deny is always possible: it is what closing the question means.
  const answers = [...new Set([...(params.choices ?? ALL_ANSWERS), 'deny' as const])];
  // an edit waiting for approval (edits.review = "ask"): its diff is drawn apart, coloured
  const diff = params.diff ? { diff: params.diff } : {};
  return { message, detail: [...lines, ...why, `Tool: ${params.tool}`].join('\n\n'), answers, ...diff };
}
