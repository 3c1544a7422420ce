// The panel input's "/" menu on the extension side: what it offers (the
// panel's commands, the workspace's skills, the ready MCP servers' prompts)
// and running what the user chose. The webview filters and draws the menu
// (slashMenu.ts); it asks for the items each time the menu opens.

import * as vscode from 'vscode';
import { McpPromptInfo, MessageRef } from './protocol';
import { listMcpPrompts, runPrompt } from './mcpPrompts';
import { PANEL_COMMANDS, SlashItem, promptArguments, slashItems } from './slashMenu';
import type { SkillInfo } from './protocol';
import type { Requester } from './sessions';

export interface SlashHost {
  /** The server's requests; throws while it is not running. */
  requester(): Requester;
  workspaceUri(): string | undefined;
  skills(): Promise<SkillInfo[]>;
  runSkill(name: string, text?: string): Promise<MessageRef>;
  /** The shown session, created when there is none. */
  sessionId(): Promise<string>;
}

export class SlashCommands {
  private skills: SkillInfo[] = [];
  private prompts: McpPromptInfo[] = [];

  constructor(
    private readonly host: SlashHost,
    private readonly post: (items: SlashItem[], loading: boolean) => void,
  ) {}

  private items(): SlashItem[] {
    return slashItems(this.skills, this.prompts);
  }

  /** Post what is known at once, then the items as listed now. A server's
   * first prompt listing waits for its MCP servers to start: the menu shows
   * the panel's commands meanwhile. A listing that fails keeps the last one. */
  async refresh(): Promise<void> {
    this.post(this.items(), true);
    const [skills, prompts] = await Promise.allSettled([
      this.host.skills(),
      Promise.resolve().then(() => listMcpPrompts(this.host.requester(), this.host.workspaceUri())),
    ]);
    if (skills.status === 'fulfilled') {
      this.skills = skills.value;
    }
    if (prompts.status === 'fulfilled') {
      this.prompts = prompts.value;
    }
    this.post(this.items(), false);
  }

  /** Run `/name rest`: what it started (true for a panel command, which says
   * its own outcome), undefined when the user dismissed a question; throws
   * with the reason when it cannot run. */
  async run(name: string, rest: string): Promise<unknown> {
    const command = PANEL_COMMANDS.find((c) => c.name === name);
    if (command) {
      if (rest) {
        throw new Error(`/${name} takes nothing after it`);
      }
      await vscode.commands.executeCommand(command.command);
      return true;
    }
    const prompt = this.prompts.find((p) => `${p.server}:${p.name}` === name);
    if (prompt) {
      const typed = promptArguments(prompt.arguments ?? [], rest);
      if (typed.error) {
        throw new Error(`/${name}: ${typed.error}`);
      }
      return runPrompt(this.host.requester(), prompt, typed.values, () => this.host.sessionId());
    }
    if (this.skills.some((s) => s.name === name)) {
      return this.host.runSkill(name, rest || undefined);
    }
    throw new Error(`there is no command /${name} (any more)`);
  }
}
