// "Agent: Manage Permissions…": the permission rules of the workspace
// (agent/permission/rules) in a quick pick, with where each comes from;
// picking a remembered one ("Always allow", "Allow for this session")
// revokes it (agent/permission/revoke), so the next such action asks again.
// Rules of the settings or the managed policy are listed as such.

import * as vscode from 'vscode';
import { PermissionRuleInfo, Request } from './protocol';


const SCOPES: Record<PermissionRuleInfo['scope'], string> = {
  session: 'this session',
  workspace: 'always, in this folder',
  settings: 'settings',
  policy: 'managed policy',
};

export function ruleLabel(rule: PermissionRuleInfo): string {
  const covers = rule.commandPrefix ? `$ ${rule.commandPrefix}` : rule.pathGlob ?? 'anything';
  return `${rule.action} ${rule.tool}: ${covers}`;
}

/** Revoke `ruleId` when given (the command's argument), else let the user pick. Returns the rules left. */
export async function managePermissions(request: Request, workspaceUri: string | undefined, ruleId?: string): Promise<PermissionRuleInfo[]> {
  const { rules } = await request('agent/permission/rules', { workspaceUri });
  let rule = ruleId ? rules.find((r) => r.id === ruleId) : undefined;
  if (ruleId && !rule) {
    throw new Error(`no permission rule ${ruleId}`);
  }
  if (!rule) {
    if (!rules.length) {
      void vscode.window.showInformationMessage('Agent: no permission rules: every question is asked. Answer "Always allow" to remember one.');
      return rules;
    }
    const picked = await vscode.window.showQuickPick(
      rules.map((r) => ({
        label: `${r.revocable ? '$(trash)' : '$(lock)'} ${ruleLabel(r)}`,
        description: SCOPES[r.scope],
        detail: r.revocable ? `Pick to revoke · ${r.source}` : `Change it in ${r.source}`,
        rule: r,
      })),
      { placeHolder: 'Permission rules of this workspace: pick a remembered one to revoke it', matchOnDescription: true, matchOnDetail: true },
    );
    rule = picked?.rule;
    if (!rule) {
      return rules;
    }
    if (!rule.revocable) {
      void vscode.window.showInformationMessage(`Agent: this rule comes from ${rule.source}: change it there.`);
      return rules;
    }
  }
  const left = await request('agent/permission/revoke', { id: rule.id, workspaceUri: rule.workspaceUri });
  void vscode.window.showInformationMessage(`Agent: revoked "${ruleLabel(rule)}": it is asked again next time.`);
  return left.rules;
}
