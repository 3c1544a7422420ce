"""What every built-in tool shares: the environment it runs in, errors, reading files.

Tools reach files only through the Editor port (open buffers win over disk)
and `WorkspaceRoots` (confinement). Permissions and the edit journal are
ports too (`PermissionGate`, `EditRecorder`), implemented one layer up by
`agent_lsp.workspace.permissions.PermissionPolicy` and
`agent_lsp.workspace.edit_journal.EditJournal`; what shell commands change
is seen by a `CommandWatcher` (`agent_lsp.workspace.checkpoints`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from agent_lsp.agent.ports import (
    DocumentSnapshot,
    Editor,
    PermissionRequest,
    ToolContext,
    ToolOutput,
)
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools.command_env import CommandEnvPolicy
from agent_lsp.tools.journal_record import FileChange, to_record
from agent_lsp.tools.language_port import LanguageIntelligence
from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots
from agent_lsp.tools.text import decode, is_binary

MAX_READ_BYTES = 20_000_000
ABORT_POLL_S = 0.01  # for abort signals that cannot be awaited

T = TypeVar("T")

# -------------------------------------------------------------------- ports


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str = ""  # why not, in words for the model


class PermissionGate(Protocol):
    async def authorize(self, editor: Editor, request: PermissionRequest) -> Verdict: ...


class EditRecorder(Protocol):
    def record(self, session_id: str, turn: int, change: FileChange) -> None: ...


class ChangeReview(Protocol):
    """How the user sees the agent's text edits (the `edits.review` setting),
    implemented by `agent_lsp.workspace.edit_review.EditReview`:
    "apply" (edits land and are saved), "review" (they land unsaved and wait
    for the user to keep or undo each hunk), "ask" (each edit waits for the
    user's approval of its diff)."""

    @property
    def mode(self) -> str: ...

    def hold(self, ctx: ToolContext, change: FileChange) -> None:
        """Keep an applied change's hunks pending until the user keeps or undoes them."""


class CommandWatcher(Protocol):
    """Sees what a shell command changed in the workspace (implemented by
    `agent_lsp.workspace.checkpoints.WorkspaceCheckpoints`)."""

    async def before_command(self) -> Any: ...

    async def changes_since(self, before: Any) -> list[FileChange]: ...

    def forget(self, before: Any) -> None: ...


# ------------------------------------------------------------------- errors


class ToolError(Exception):
    """A failure the model sees as the tool's result."""

    def __init__(self, message: str, code: str = "TOOL_ERROR", meta: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.meta = meta


def error_output(message: str, code: str, meta: dict[str, Any] | None = None) -> ToolOutput:
    return ToolOutput(
        content=message,
        is_error=True,
        error={"name": "ToolError", "code": code, "message": message},
        meta=meta,
    )


class ToolInput(BaseModel):
    """Base of every input model: camelCase on the wire, snake_case in code."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


# -------------------------------------------------------------- environment


@dataclass
class ToolEnv:
    editor: Editor
    roots: WorkspaceRoots
    policy: PermissionGate | None = None
    journal: EditRecorder | None = None
    command_env: CommandEnvPolicy = CommandEnvPolicy()
    sandbox: SandboxPolicy | None = None  # None: commands run unsandboxed, asked about as always
    commands: CommandWatcher | None = None  # None: what commands change is not journaled
    review: ChangeReview | None = None  # None: edits land and are saved ("apply")
    language: LanguageIntelligence | None = None  # None: no language server is asked
    problems_after_edit: bool = True  # edits end their result with the problems they added

    @property
    def edit_language(self) -> LanguageIntelligence | None:
        """The language port the edit tools ask for the problems they added, if they do."""
        return self.language if self.problems_after_edit else None

    @property
    def review_mode(self) -> str:
        return self.review.mode if self.review is not None else "apply"

    def resolve(self, raw: str | None, *, default_root: bool = False) -> Path:
        if raw is None or (default_root and not str(raw).strip()):
            return self.roots.primary
        try:
            return self.roots.resolve(raw)
        except OutsideWorkspaceError as e:
            raise ToolError(str(e), "OUTSIDE_WORKSPACE") from None

    def show(self, path: Path) -> str:
        return self.roots.display(path)

    async def authorize(self, ctx: ToolContext, request: PermissionRequest) -> None:
        """Raise PERMISSION_DENIED unless the policy allows (no policy: allowed)."""
        if self.policy is None:
            return
        if request.session_id is None:
            request = replace(request, session_id=ctx.session_id)
        verdict = await unless_aborted(
            ctx,
            self.policy.authorize(self.editor, request),
            f"The turn was cancelled while waiting for permission ({request.title}); nothing was done.",
        )
        if not verdict.allowed:
            raise ToolError(
                f"Permission denied: {request.title}. {verdict.reason}".strip(), "PERMISSION_DENIED"
            )

    def record(self, ctx: ToolContext, change: FileChange) -> dict[str, Any]:
        """Journal the change; its durable record goes in the tool result's meta["journal"]."""
        if self.journal is not None:
            self.journal.record(ctx.session_id, ctx.turn, change)
        return to_record(change)


@dataclass(frozen=True)
class FileText:
    path: Path
    text: str
    version: int | None  # the open buffer's version; None when read from disk
    is_open: bool
    lossy: bool = False  # disk bytes were not valid UTF-8


def read_text(env: ToolEnv, path: Path, shown: str) -> FileText:
    """The text the user sees: the open buffer, else the file on disk."""
    snapshot: DocumentSnapshot | None = env.editor.document(path)
    if snapshot is not None:
        return FileText(path, snapshot.text, snapshot.version, True)
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory; use list_dir to see its entries", "IS_DIRECTORY")
    try:
        size = path.stat().st_size
        if size > MAX_READ_BYTES:
            raise ToolError(
                f"'{shown}' is too large to read ({size / 1e6:.0f} MB); search it with grep", "TOO_LARGE"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"'{shown}' does not exist", "NOT_FOUND") from None
    except OSError as e:
        raise ToolError(f"cannot read '{shown}': {e.strerror}", "READ_FAILED") from None
    if is_binary(data):
        raise ToolError(f"'{shown}' is a binary file ({len(data)} bytes); not shown", "BINARY_FILE")
    decoded = decode(data)
    return FileText(path, decoded.text, None, False, decoded.lossy)


# ------------------------------------------------------------- cancellation


async def unless_aborted(ctx: ToolContext, awaitable: Awaitable[T], message: str) -> T:
    """Await `awaitable` (an editor round trip: applyEdit, a permission question,
    a save) unless the turn is cancelled first: then stop waiting at once, drop
    the answer and raise ABORTED with `message` (so a cancelled turn ends
    without waiting for the editor)."""
    task = asyncio.ensure_future(awaitable)
    signal = getattr(ctx, "signal", None)
    if signal is None:
        return await task
    wait = getattr(signal, "wait", None)
    waiter = asyncio.ensure_future(wait() if callable(wait) else _poll_aborted(signal))
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        raise
    if task.done():
        waiter.cancel()
        return task.result()
    task.cancel()
    raise ToolError(message, "ABORTED")


async def _poll_aborted(signal: Any) -> None:
    while not signal.aborted:
        await asyncio.sleep(ABORT_POLL_S)


# --------------------------------------------------------------------- tool


class BuiltinTool:
    """Implements the Tool port; subclasses write `execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    parallel: ClassVar[bool] = False

    def __init__(self, env: ToolEnv):
        self.env = env

    def is_parallel(self, args: BaseModel) -> bool:
        return self.parallel

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        try:
            return await self.execute(args, ctx)
        except ToolError as e:
            return error_output(e.message, e.code, e.meta)

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError
