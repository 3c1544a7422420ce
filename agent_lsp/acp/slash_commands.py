"""The ACP face's own slash commands (`available_commands_update`): /compact,
/revert [turn] and /new, each answered with a line of text (the MCP servers'
prompts as commands are acp/mcp_prompts.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from agent_lsp.agent.compaction import CompactionError

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost


COMMANDS = [
    AvailableCommand(name="compact", description="Summarise the conversation so far to free context"),
    AvailableCommand(name="revert", description="Undo the file changes of a turn (default: the last one)",
                     input=AvailableCommandInput(root=UnstructuredCommandInput(hint="turn number (optional)"))),
    AvailableCommand(name="new", description="Start a new, empty session in this folder (open it from the "
                                             "session history; this one stays as it is)"),
]
COMMAND_NAMES = frozenset(f"/{command.name}" for command in COMMANDS)


async def run_slash_command(host: WorkspaceHost, agent: Agent, name: str, argument: str) -> str:
    """A slash command (the name without its "/"): its outcome, said as an agent message (not in the
    session log)."""
    if name == "new":
        fresh = host.new_session()
        text = (f"Started session {fresh.session_id} in {host.root}. Open it from the session history "
                "(it is listed with the others); this conversation stays here as it is.")
    elif name == "compact":
        try:
            result = await agent.compact_now()
            text = "Compacted the conversation." if result else "Nothing to compact yet."
        except CompactionError as error:
            text = f"Could not compact: {error}"
    else:
        turns = [e.data["turn"] for e in agent.session.events if e.type == "turn/start"]
        try:
            turn = int(argument) if argument.strip() else (turns[-1] if turns else 0)
        except ValueError:
            turn = -1
        if turn not in turns:
            text = f"No turn {argument.strip() or ''} to revert." if argument.strip() else "No turn to revert."
        else:
            report = await host.revert_turn(agent.session_id, turn)
            text = f"Reverted turn {turn}: {len(report.reverted)} file(s) restored" + (
                f", {len(report.skipped)} left alone (changed since)" if report.skipped else "") + "."
    return text
