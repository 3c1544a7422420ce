"""What a file tool waiting for permission would change, as ACP `diff` content.

A client that previews an edit before approving it (codecompanion.nvim,
Zed) needs the diff in `session/request_permission`'s tool call, before the
tool has written anything. The face knows the running tool's arguments and
the text it works on (the client's buffer or the disk), so it computes the
change the tool is about to make and describes it with the same journal
record the finished tool call's diff is made from (tools/journal_record.py):
the question shows the regions the `tool_call_update` shows afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_lsp.acp.updates import record_diffs
from agent_lsp.tools.base import ToolError
from agent_lsp.tools.edit import locate_edits
from agent_lsp.tools.journal_record import FileChange, to_record
from agent_lsp.tools.text import replace_spans

WHOLE_FILE_TOOLS = frozenset({"write_file", "create_file"})


def permission_diffs(tool: str, arguments: Any, path: Path, before: str | None) -> list[Any]:
    """The `diff` contents of `tool` (with its parsed `arguments`) changing `path`,
    whose text is `before` (None: no such file); [] when it is not a text change."""
    if tool == "edit_file" and before is not None:
        try:
            spans = locate_edits(before, list(arguments.edits), str(path))
        except (ToolError, AttributeError):
            return []  # the tool reports it
        change = FileChange(path, before, replace_spans(before, spans), spans=tuple(spans))
    elif tool in WHOLE_FILE_TOOLS and isinstance(getattr(arguments, "content", None), str):
        change = FileChange(path, before, arguments.content)
    else:
        return []
    return record_diffs(to_record(change), new_text=arguments.content if change.before is None else None)
