// "Agent: Run Skill…": a quick pick of the workspace's skills (agent/skill/list),
// then an optional text, run in the panel's session (agent/skill/run).

import * as vscode from 'vscode';
import { MessageRef, SkillInfo } from './protocol';

interface SkillSessions {
  skills(): Promise<SkillInfo[]>;
  runSkill(name: string, text?: string): Promise<MessageRef>;
}

/** Run a skill: `name` (and `text`) given, at once; otherwise the user picks one and may add a text. */
export async function runSkillCommand(
  sessions: SkillSessions,
  name?: string,
  text?: string,
): Promise<{ sessionId: string; messageId: string } | undefined> {
  if (!name) {
    const skills = await sessions.skills();
    if (!skills.length) {
      void vscode.window.showInformationMessage('Agent: no skills in this workspace (.agents/skills/<name>/SKILL.md).');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      skills.map((s) => ({ label: s.name, description: s.source, detail: s.description })),
      { placeHolder: 'Run a skill', matchOnDetail: true },
    );
    if (!picked) {
      return undefined;
    }
    name = picked.label;
    text = await vscode.window.showInputBox({ prompt: `Anything to add for the skill "${name}"? (optional)` });
    if (text === undefined) {
      return undefined; // dismissed
    }
  }
  return sessions.runSkill(name, text || undefined);
}
