"""The project's memory: a Markdown file the agent appends notes to, and reads at the start of a session.

It lives in the workspace, at `.agents/memory.md`, so the user sees and edits
it like any file (and decides whether to commit it). The `remember` tool
appends one dated line through the editor, as the other file tools write:
an open buffer gets the edit, the change is journaled (turn revert undoes
it) and the permission policy applies (a write).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from agent_lsp.agent.ports import ToolContext, ToolOutput
from agent_lsp.tools.base import BuiltinTool, ToolError, ToolInput, read_text
from agent_lsp.tools.files import WriteFile, WriteFileInput

MEMORY_FILE = ".agents/memory.md"
MAX_NOTE_CHARS = 2_000
MAX_SHOWN_CHARS = 16_000  # what enters the model's context at session start
HEADER = (
    "# Project memory\n\n"
    "Notes the agent keeps about this project. Edit or delete them freely: the agent reads this file "
    "at the start of each session and adds to it with its `remember` tool.\n\n"
)


def memory_path(root: Path) -> Path:
    return root / MEMORY_FILE


def memory_text(root: Path) -> str:
    """The memory file's text as it is on disk ('' when there is none), capped."""
    try:
        text = memory_path(root).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + f"\n[… cut at {MAX_SHOWN_CHARS} characters]"
    return text


class RememberInput(ToolInput):
    note: str


class Remember(BuiltinTool):
    name = "remember"
    description = (
        f"Add a note to the project's memory ({MEMORY_FILE}), which you read at the start of every session. "
        "Keep notes short and durable: conventions, commands that work, pitfalls; not the task at hand."
    )
    input_model = RememberInput

    async def execute(self, args: RememberInput, ctx: ToolContext) -> ToolOutput:
        note = " ".join(args.note.split())
        if not note:
            raise ToolError("the note is empty", "EMPTY_NOTE")
        if len(note) > MAX_NOTE_CHARS:
            raise ToolError(f"the note is longer than {MAX_NOTE_CHARS} characters; keep it short", "TOO_LONG")
        path = memory_path(self.env.roots.primary)
        current = read_text(self.env, path, MEMORY_FILE).text if path.exists() or self.env.editor.document(path) else HEADER
        if current and not current.endswith("\n"):
            current += "\n"
        line = f"- {_dt.date.today().isoformat()}: {note}\n"
        written = await WriteFile(self.env).execute(WriteFileInput(path=MEMORY_FILE, content=current + line), ctx)
        if written.is_error:
            return written
        return ToolOutput(content=f"Remembered in {MEMORY_FILE}: {note}", meta={**(written.meta or {}), "note": note})
