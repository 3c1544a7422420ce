// The words of a permission question: what exactly the agent wants to do.

import { PermissionParams } from './protocol';

export function permissionQuestion(params: PermissionParams): { message: string; detail: string } {
  const subject = params.command ?? params.path ?? params.title;
  const verb: Record<string, string> = { command: 'run', read: 'read', write: 'write', delete: 'delete' };
  const message = `The agent wants to ${verb[params.kind] ?? params.kind} ${subject}`;
  const detail = [params.title !== subject ? params.title : '', params.detail ?? '', `Tool: ${params.tool}`].filter(Boolean).join('\n\n');
  return { message, detail };
}
