"""The ports through which the agent loop and its tools reach the outside.

The loop defines them; the LSP layer, the headless client and the tests
implement them. Nothing here imports pygls, lsprotocol or httpx.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Protocol, Union

from pydantic import BaseModel

from agent_lsp.llm.types import AbortSignal

# --------------------------------------------------------------------- tools


@dataclass
class ToolOutput:
    """What a tool body returns. A failure is an output too (`is_error`): the
    model sees it and decides; it never ends the turn."""

    content: str | list[dict[str, Any]]
    is_error: bool = False
    error: dict[str, Any] | None = None  # {"name", "code", "message"} for failures
    meta: dict[str, Any] | None = None  # for clients (diffs, exit codes); not sent to the model
    concludes_turn: bool = False
    additional_contexts: list[str] = field(default_factory=list)  # enter at the next step


class ToolContext(Protocol):
    """What a running tool may use of the agent."""

    call_id: str
    name: str
    turn: int
    step: int
    session_id: str
    signal: AbortSignal

    def steer(self, content: str) -> None: ...

    def inject(self, content: str) -> None: ...

    def conclude_turn(self) -> None: ...

    def progress(self, data: dict[str, Any]) -> None:
        """Live, tool-owned event (`agent/tool/progress {callId, data}`), e.g. shell output."""


class Tool(Protocol):
    name: str
    description: str
    input_model: type[BaseModel]

    def is_parallel(self, args: BaseModel) -> bool:
        """Pure and synchronous. Only an exact True runs the call alongside
        others; anything else (or a throw) makes it exclusive."""

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput: ...


# -------------------------------------------------------------------- editor
# Positions are (line, character) with characters counted in Unicode code
# points of the document text; the LSP layer converts to the negotiated
# position encoding (UTF-16 by default).


@dataclass(frozen=True)
class TextEdit:
    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str


@dataclass(frozen=True)
class TextFileEdit:
    path: Path
    edits: tuple[TextEdit, ...]
    version: int | None = None  # the buffer version the edits were computed on; None = not open


@dataclass(frozen=True)
class CreateFile:
    path: Path
    overwrite: bool = False
    ignore_if_exists: bool = False


@dataclass(frozen=True)
class RenameFile:
    old_path: Path
    new_path: Path
    overwrite: bool = False


@dataclass(frozen=True)
class DeleteFile:
    path: Path
    recursive: bool = False


EditOperation = Union[TextFileEdit, CreateFile, RenameFile, DeleteFile]


@dataclass(frozen=True)
class ApplyResult:
    applied: bool
    failure_reason: str | None = None


@dataclass(frozen=True)
class DocumentSnapshot:
    path: Path
    text: str
    version: int | None  # None: read from disk, not an open buffer


PermissionAnswer = Literal["once", "session", "always", "deny"]


@dataclass(frozen=True)
class PermissionRequest:
    tool: str
    title: str  # one line for the user, naming the exact command or path
    kind: Literal["command", "read", "write", "delete"]
    detail: str | None = None  # e.g. the full command line
    command: str | None = None
    path: Path | None = None
    session_id: str | None = None
    # The answers the policy honours: "session"/"always" are left out when it
    # asks every time, and `asks_every_time` says why (shown to the user).
    choices: tuple[PermissionAnswer, ...] = ("once", "session", "always", "deny")
    asks_every_time: str | None = None
    diff: str | None = None  # an edit waiting for approval: its unified diff
    # A command that runs sandboxed with no network: the policy may allow it without
    # asking (`permissions.sandboxedCommands`), unless a rule asks or denies.
    sandboxed: bool = False
    # Set when the question is asked in several windows at once (the agent host): the
    # first answer wins, and the others are told it was answered (`permission_settled`).
    permission_id: str | None = None

    def __post_init__(self) -> None:
        # One line, whatever a command, a path or a server's tool name holds: a
        # question shown by its first line must not hide the rest of the command
        # behind a line break, nor let text after one pass for our own words.
        object.__setattr__(self, "title", one_line(self.title))


LINE_BREAK_SHOWN = "\u23ce"  # ⏎
_LINE_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """`text` with each line break shown as ⏎."""
    return _LINE_BREAKS.sub(LINE_BREAK_SHOWN, text)


class Editor(Protocol):
    """The editor that owns the buffers, seen from the tools."""

    @property
    def supports_resource_operations(self) -> bool: ...

    def document(self, path: Path) -> DocumentSnapshot | None:
        """The open buffer's text and version, or None when not open."""

    def open_documents(self) -> list[Path]: ...

    async def apply_edit(self, operations: list[EditOperation], label: str, review: str | None = None) -> ApplyResult:
        """`review`: the "edits.review" mode this edit was made under, read once
        by whoever holds or saves it after it lands (None: the folder's setting now)."""

    async def save(self, paths: list[Path]) -> list[Path]:
        """Make edited buffers' text visible on disk (what a command run next reads).
        Returns the paths left unsaved because their buffers hold the user's own
        unsaved changes (the file on disk is unchanged)."""

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        """No answer, a timeout or a cancel is "deny"."""


ToolFactory = Callable[..., list[Tool]]
