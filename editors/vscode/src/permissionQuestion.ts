// The words of a permission question: what exactly the agent wants to do.

import { PermissionParams } from './protocol';

export function permissionQuestion(params: PermissionParams): { message: string; detail: string } {
  const subject = params.command ?? params.path ?? params.title;
  const verb: Record<string, string> = { command: 'run', read: 'read', write: 'write', delete: 'delete' };
  const action = `${verb[params.kind] ?? params.kind} ${subject}`;
  const message = `The agent wants to ${action}`;
  // Only what the message does not say already (the title usually is "Run `<command>`").
  const says = (line: string) => [subject, action].includes(line.replace(/`/g, '').replace(/^./, (c) => c.toLowerCase()));
  const lines = [params.title, params.detail ?? ''].filter((line, i, all) => line && !says(line) && all.indexOf(line) === i);
  return { message, detail: [...lines, `Tool: ${params.tool}`].join('\n\n') };
}
