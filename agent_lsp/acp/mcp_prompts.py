"""MCP prompts as ACP slash commands: `/server:prompt args` in a `session/prompt`.

The prompts of the session's ready MCP servers (the folder's and those the
client passed) are offered in `available_commands_update` as `server:prompt`
(ACP command names have no spaces; the colon keeps them apart from the
face's own commands), with the prompt's description and an `input` hint
naming its arguments: `<path> [focus=…]`.

The text after the command fills the prompt's arguments: `name=value` words
for arguments of that name (quoted as in a shell when the value has spaces),
and the rest of the text for the first required argument not given that way
(the first argument when none is required), so `/web:review src/a.py` and
`/web:review path=src/a.py focus=tests` both work. Text no argument takes
follows the prompt's text. The filled-in prompt is the user's message
(agent_lsp.mcp.prompts), a followup like any prompt.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from agent_lsp.mcp import McpManager
from agent_lsp.mcp.prompts import PromptProblem, list_prompts, prompt_text


@dataclass(frozen=True)
class PromptCommand:
    server: str
    prompt: str
    description: str | None
    arguments: tuple[dict[str, Any], ...]  # {name, description?, required}

    @property
    def name(self) -> str:
        return f"{self.server}:{self.prompt}"

    def command(self) -> AvailableCommand:
        hint = " ".join(f"<{a['name']}>" if a["required"] else f"[{a['name']}=…]" for a in self.arguments)
        return AvailableCommand(
            name=self.name, description=self.description or f"The prompt {self.prompt} of the MCP server {self.server}",
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
        )

    def fill(self, text: str) -> tuple[dict[str, str], str]:
        """The arguments `text` gives, and the text no argument takes."""
        names = [a["name"] for a in self.arguments]
        try:
            words = shlex.split(text)
        except ValueError:  # an unclosed quote: words as typed
            words = text.split()
        given: dict[str, str] = {}
        rest = []
        for word in words:
            key, sep, value = word.partition("=")
            if sep and key in names and key not in given:
                given[key] = value
            else:
                rest.append(word)
        free = " ".join(rest)
        if free:
            open_ = [a["name"] for a in self.arguments if a["name"] not in given]
            required = [a["name"] for a in self.arguments if a["required"] and a["name"] not in given]
            takes = (required or open_)[:1]
            if takes:
                given[takes[0]], free = free, ""
        return given, free


async def session_prompt_commands(managers: list[McpManager]) -> dict[str, PromptCommand]:
    """name -> command, for the prompts of these managers' ready servers (a later manager's win)."""
    commands: dict[str, PromptCommand] = {}
    for manager in managers:
        for prompt in await list_prompts(manager):
            command = PromptCommand(prompt["server"], prompt["name"], prompt.get("description"),
                                    tuple(prompt.get("arguments") or ()))
            commands[command.name] = command
    return commands


async def run_prompt_command(managers: list[McpManager], command: PromptCommand, text: str) -> str:
    """The user's message of `/command text`; PromptProblem when it cannot be filled in."""
    manager = next((m for m in reversed(managers) if command.server in m.connections), managers[0])
    arguments, rest = command.fill(text)
    message = await prompt_text(manager, command.server, command.prompt, arguments)
    return f"{message}\n\n{rest}" if rest else message


__all__ = ["PromptCommand", "PromptProblem", "run_prompt_command", "session_prompt_commands"]
