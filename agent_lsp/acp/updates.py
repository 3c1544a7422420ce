"""Session log events -> ACP `session/update`s: one mapping for live and replay.

Only durable events are mapped (the model's stream is durable, chunk by
chunk), so `session/load` replaying a session's log sends the updates a
client following it live was sent (text deltas joined as acp/session.py
joins them). The one difference is the user's own
prompts: live, the client sent them and ACP agents do not echo them; replayed,
they come as `user_message_chunk`s (`replay=True`) so the client can show the
conversation.

Tool calls: `tool/call` -> `tool_call` (title, kind, locations, raw input,
status `pending`), the durable `tool/result` -> `tool_call_update` (status
`completed` or `failed`, the text the model saw, and a `diff` per changed
region for file edits, taken from the result's journal record). Command output
is the result text (exit code included), the same live and on replay.

The plan the model keeps with `todo_write` (`plan/update`, the whole list
each time) -> ACP's `plan` update, which also replaces the client's list.
A permission mode switch (`session/mode`) -> `current_mode_update`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Callable

from acp import (
    image_block,
    plan_entry,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import ConfigOptionUpdate, CurrentModeUpdate, ToolCallLocation, ToolCallStart

from agent_lsp.store import Event, files

TOOL_KINDS = {
    "read_file": "read",
    "list_dir": "search",
    "glob": "search",
    "grep": "search",
    "edit_file": "edit",
    "write_file": "edit",
    "create_file": "edit",
    "delete_file": "delete",
    "rename_file": "move",
    "run_command": "execute",
    "todo_write": "think",  # the plan itself arrives as a `plan` update
}

# What to call a tool call in the client's list, from its arguments.
_TITLE_ARGUMENT = {"run_command": "command", "grep": "pattern", "glob": "pattern"}
_TITLE_VERB = {
    "read_file": "Read", "list_dir": "List", "glob": "Find", "grep": "Search", "edit_file": "Edit",
    "write_file": "Write", "create_file": "Create", "delete_file": "Delete", "rename_file": "Rename",
    "run_command": "Run", "todo_write": "Update the plan",
}

MAX_TITLE_CHARS = 120


def text_delta(event: Event) -> tuple[bool, str] | None:
    """(is a thought, text) of a streamed text or reasoning delta; None for any other event.
    These become `agent_message_chunk` / `agent_thought_chunk` (acp/session.py joins them)."""
    if event.type != "assistant/chunk":
        return None
    chunk = event.data.get("chunk") or {}
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta") and chunk.get("text"):
        return kind == "reasoning-delta", chunk["text"]
    return None


def tool_kind(name: str) -> str:
    return TOOL_KINDS.get(name, "other")


class UpdateMapper:
    """The updates of one session's events, in order; keeps the tool calls'
    arguments between `tool/call` and `tool/result`."""

    def __init__(self, root: Path, files: Path | None = None, model_option: Callable[[], Any] | None = None):
        self.root = root
        self.files = files  # where the session's images are (store/files.py): a replay shows them
        self.model_option = model_option  # the session's model option, sent again when the model switches
        self._arguments: dict[str, dict[str, Any]] = {}

    def updates(self, event: Event, *, replay: bool = False) -> list[Any]:
        kind, data = event.type, event.data
        if kind == "assistant/chunk":
            delta = text_delta(event)
            if delta is None:
                return []
            return [update_agent_thought_text(delta[1]) if delta[0] else update_agent_message_text(delta[1])]
        if kind == "tool/call":
            return [self._tool_call(data)]
        if kind == "tool/result" and data.get("surfaceOp") == "append":
            return [self._tool_result(data)]
        if kind == "plan/update":
            return [update_plan(plan_entry(item["content"], priority=item.get("priority") or "medium",
                                           status=item["status"]) for item in data.get("items") or ())]
        if kind == "session/mode":
            return [CurrentModeUpdate(session_update="current_mode_update", current_mode_id=data["mode"])]
        if kind == "session/model" and not replay and self.model_option is not None:
            # a switch the client did not ask for (the endpoint's one model) shows too
            return [ConfigOptionUpdate(session_update="config_option_update", config_options=[self.model_option()])]
        if kind == "user/message" and replay and data.get("surfaceOp") == "append":
            message = data.get("message") or {}
            if message.get("source", "user") == "user":
                note = message.get("note")  # the content is for the model: show the note
                text = note.get("text") or "" if isinstance(note, dict) else \
                    "".join(b.get("text") or "" for b in message.get("content") or () if b.get("type") == "text")
                return ([update_user_message_text(text)] if text else []) + self._images(message)
        return []

    def _images(self, message: dict[str, Any]) -> list[Any]:
        """An image chunk for each image of a replayed user message whose file is still there."""
        out = []
        for block in message.get("content") or ():
            if block.get("type") != "image" or not block.get("file") or self.files is None:
                continue
            try:
                data = files.read(self.files, block["file"])
            except OSError:
                continue  # its placeholder text was shown
            out.append(update_user_message(image_block(base64.b64encode(data).decode("ascii"), block["mediaType"])))
        return out

    # ------------------------------------------------------------ tool calls

    def _tool_call(self, data: dict[str, Any]) -> ToolCallStart:
        call_id, name = data["callId"], data.get("name", "tool")
        try:
            arguments = json.loads(data.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        if not isinstance(arguments, dict):
            arguments = {}
        self._arguments[call_id] = arguments
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=self._title(name, arguments),
            kind=tool_kind(name),
            status="pending",
            locations=self._locations(arguments) or None,
            raw_input=arguments,
        )

    def _tool_result(self, data: dict[str, Any]) -> Any:
        call_id = data["callId"]
        arguments = self._arguments.pop(call_id, {})
        message = data.get("message") or {}
        failed = bool(message.get("isError") or data.get("error"))
        text = "".join(b.get("text") or "" for b in message.get("content") or () if b.get("type") == "text")
        content: list[Any] = []
        meta = data.get("meta") or {}
        if not failed:
            content += self._diffs(meta, arguments)
        if text:
            content.append(tool_content(text_block(text)))
        shown = {k: v for k, v in meta.items() if k != "journal"}  # the records are in the diffs
        return update_tool_call(call_id, status="failed" if failed else "completed", content=content or None,
                                raw_output=shown or None)

    def _title(self, name: str, arguments: dict[str, Any]) -> str:
        subject = arguments.get(_TITLE_ARGUMENT.get(name, "path"))
        if name == "rename_file":
            subject = f"{arguments.get('oldPath', '')} -> {arguments.get('newPath', '')}"
        title = f"{_TITLE_VERB.get(name, name)} {subject}" if subject else _TITLE_VERB.get(name, name)
        return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 1] + "…"

    def _absolute(self, path: str) -> str:
        p = Path(path)
        return str(p if p.is_absolute() else self.root / p)

    def _locations(self, arguments: dict[str, Any]) -> list[ToolCallLocation]:
        locations = []
        for key in ("path", "oldPath", "newPath"):
            value = arguments.get(key)
            if isinstance(value, str) and value:
                line = arguments.get("startLine")
                locations.append(ToolCallLocation(path=self._absolute(value),
                                                  line=line - 1 if key == "path" and isinstance(line, int) and line > 0 else None))
        return locations

    def _diffs(self, meta: dict[str, Any], arguments: dict[str, Any]) -> list[Any]:
        """A `diff` per changed region of each file the tool changed (its journal records)."""
        content = arguments.get("content")
        return [diff for record in meta.get("journal") or ()
                for diff in record_diffs(record, new_text=content if isinstance(content, str) else None)]


def record_diffs(record: dict[str, Any], *, new_text: str | None = None) -> list[Any]:
    """The `diff`s of one journal record (tools/journal_record.py): one per changed
    region of an edit, with its context; a created file's whole text (`new_text`,
    which the record does not keep); a deleted file's old text."""
    path = str(record.get("path", ""))
    if record.get("op") == "edit":
        return [tool_diff_content(path, pre + new + post, pre + old + post)
                for _at, old, new, pre, post in record.get("hunks") or ()]
    if record.get("op") == "create":
        return [tool_diff_content(path, new_text or "", None)]
    if record.get("op") == "delete" and record.get("before") is not None:
        return [tool_diff_content(path, "", record["before"])]
    return []
