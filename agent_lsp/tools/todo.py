"""`todo_write`: the model keeps the session's plan as a checklist.

Each call replaces the whole list. The list is not the tool's to keep: it goes
to the `PlanBoard` port (implemented by `agent_lsp.workspace.session_modes`),
which records it in the session log as a `plan/update` event, so clients draw
it as it changes and find it again when they load the session.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Protocol

from pydantic import Field

from agent_lsp.agent.ports import ToolContext, ToolOutput
from agent_lsp.tools.base import ToolInput

NAME = "todo_write"
MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class PlanItemInput(ToolInput):
    content: str = Field(min_length=1, description="one step, in a few words")
    status: Literal["pending", "in_progress", "completed"]
    priority: Literal["high", "medium", "low"] | None = None


class TodoInput(ToolInput):
    items: list[PlanItemInput] = Field(max_length=100)


class PlanBoard(Protocol):
    def update(self, ctx: ToolContext, items: list[dict]) -> None:
        """Record the session's new plan."""


class TodoWrite:
    name: ClassVar[str] = NAME
    description: ClassVar[str] = (
        "Write the task's plan as a checklist the user sees, every step with its status, one in_progress at a "
        "time. Each call replaces the whole list; update it as you go. Use it for tasks of several steps, and "
        "in plan mode to lay out what you will do."
    )
    input_model = TodoInput

    def __init__(self, board: PlanBoard):
        self.board = board

    def is_parallel(self, args: TodoInput) -> bool:
        return False  # the last write wins: keep them in model order

    async def run(self, args: TodoInput, ctx: ToolContext) -> ToolOutput:
        items = [item.model_dump(by_alias=True, exclude_none=True) for item in args.items]
        self.board.update(ctx, items)
        if not items:
            return ToolOutput(content="The plan is now empty.")
        lines = [f"{MARKS[item['status']]} {item['content']}" for item in items]
        done = sum(item["status"] == "completed" for item in items)
        return ToolOutput(content=f"Plan updated ({done}/{len(items)} done):\n" + "\n".join(lines))
