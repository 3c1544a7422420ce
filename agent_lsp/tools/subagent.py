"""The `subagent` tool: the model hands a task to a sub-agent and gets its final answer back.

The tool only describes the call; running a child session (its log, tools,
model, cancel signal) is the workspace's job, reached through the
`SubagentRunner` port (implemented by `agent_lsp.workspace.subagents`). Calls
run in parallel, so several sub-agents asked for in one step work at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import Field

from agent_lsp.agent.ports import ToolContext, ToolOutput
from agent_lsp.tools.base import ToolInput, error_output

NAME = "subagent"


class SubagentInput(ToolInput):
    description: str = Field(min_length=1, max_length=200, description="a few words naming the task, shown to the user")
    task: str = Field(min_length=1, description="all the sub-agent needs to know: it sees nothing of this conversation")
    agent_type: str | None = Field(default=None, description="one of the agent types listed above")


@dataclass
class SubagentOutcome:
    """How a child session ended. `status`: completed, cancelled or failed."""

    session_id: str
    status: str
    answer: str
    usage: dict[str, int] = field(default_factory=dict)
    reason: str = ""  # why it did not complete, in words for the model

    def meta(self, description: str, agent_type: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": self.session_id, "status": self.status, "description": description,
                               "usage": self.usage}
        if agent_type:
            out["agentType"] = agent_type
        return out


class SubagentRunner(Protocol):
    def agent_types(self) -> dict[str, str]:
        """name -> description of the agent types the model may ask for."""

    async def run(self, args: SubagentInput, ctx: ToolContext) -> SubagentOutcome:
        """Run a child session to its end; ValueError for an unknown agent type."""


BASE_DESCRIPTION = (
    "Hand a self-contained task to a sub-agent: it works in its own session (by default it may only read and "
    "search) and its final report is this tool's result. Several calls in one step run in parallel."
)


class SubagentTool:
    name: ClassVar[str] = NAME
    input_model = SubagentInput

    def __init__(self, runner: SubagentRunner):
        self.runner = runner

    @property
    def description(self) -> str:  # type: ignore[override]
        types = self.runner.agent_types()
        if not types:
            return BASE_DESCRIPTION
        listed = "\n".join(f"- {name}: {text}" for name, text in sorted(types.items()))
        return f"{BASE_DESCRIPTION}\nAgent types (agentType):\n{listed}"

    def is_parallel(self, args: SubagentInput) -> bool:
        return True

    async def run(self, args: SubagentInput, ctx: ToolContext) -> ToolOutput:
        try:
            outcome = await self.runner.run(args, ctx)
        except ValueError as e:
            return error_output(str(e), "INVALID_ARGUMENTS")
        meta = {"subagent": outcome.meta(args.description, args.agent_type)}
        if outcome.status == "completed":
            return ToolOutput(content=outcome.answer or "(the sub-agent gave no answer)", meta=meta)
        text = f"The sub-agent {outcome.status}: {outcome.reason}"
        if outcome.answer:
            text += f"\nWhat it had answered so far:\n{outcome.answer}"
        code = "SUBAGENT_CANCELLED" if outcome.status == "cancelled" else "SUBAGENT_FAILED"
        return error_output(text, code, meta)
