"""The Editor port (agent/ports.py) over an ACP client.

- Files: when the client advertised `fs.readTextFile`, the text a file tool
  works on is the client's (`fs/read_text_file`, so unsaved buffers are seen):
  the face fetches it before each file tool runs (`prefetch`), and `document()`
  answers it with a version that goes up whenever the client's text changed.
  When it advertised `fs.writeTextFile`, text edits are written through
  `fs/write_text_file`, version-checked first: the client's text is read
  again, and if it is not the text the edit was computed on the edit is
  refused (the edit tool then hands the model the fresh text). Without those
  capabilities, reads and edits go to disk (DiskEditor). Creating, deleting
  and renaming always go to disk: ACP has no such client methods.
- Permission: `session/request_permission` with allow once / allow always /
  reject; no answer in time or a failed request raises, so the permission
  policy tells the model which it was (never "the user denied it"). A file tool's question
  carries the diff it is about to make (acp/permission_preview.py).

The session a request belongs to (ACP's file and permission methods name it)
is the one whose tool is running: the face sets `current_session` (and the
tool call: `current_call`, `current_tool`) around every tool body.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import PermissionOption, ToolCallLocation, ToolCallUpdate

from agent_lsp.agent.ports import (
    ApplyResult,
    CreateFile,
    DocumentSnapshot,
    EditOperation,
    PermissionAnswer,
    PermissionRequest,
    TextFileEdit,
    one_line,
)
from agent_lsp.acp.permission_preview import permission_diffs
from agent_lsp.tools.paths import WorkspaceRoots
from agent_lsp.workspace.disk_editor import DiskEditor, EditFailed, apply_text_edits
from agent_lsp.visible import visible_name

log = logging.getLogger(__name__)

current_session: contextvars.ContextVar[str | None] = contextvars.ContextVar("acp_current_session", default=None)
current_call: contextvars.ContextVar[str | None] = contextvars.ContextVar("acp_current_call", default=None)
# (tool name, its parsed arguments) of the running tool call
current_tool: contextvars.ContextVar[tuple[str, Any] | None] = contextvars.ContextVar("acp_current_tool", default=None)

PERMISSION_OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
)
PERMISSION_ANSWERS: dict[str, PermissionAnswer] = {"allow_once": "once", "allow_always": "always", "reject_once": "deny"}
_PERMISSION_KINDS = {"command": "execute", "read": "read", "write": "edit", "delete": "delete"}


@dataclass
class _Snapshot:
    text: str
    version: int
    users: int  # tool calls running on it; dropped when none are


class AcpEditor:
    """One per ACP connection, shared by the workspace hosts of its sessions."""

    holds_unsaved_text = False  # edits land on disk, or in the client's file through fs/write_text_file

    def __init__(self, connection: Any, roots_of: Any, updates_sent: Any, *, permission_timeout_s: float = 300.0):
        self.connection = connection  # acp.AgentSideConnection (the client's methods)
        self._roots_of = roots_of  # () -> the workspace roots of the connection's sessions
        # async (session id) -> None once the session's queued updates are out: a question
        # about a tool call must not reach the client before the tool call itself
        self._updates_sent = updates_sent
        self.permission_timeout_s = permission_timeout_s
        self.reads = False
        self.writes = False
        self._snapshots: dict[Path, _Snapshot] = {}
        self._disk = DiskEditor([Path.cwd()])  # its roots are set before each use

    def configure(self, *, reads: bool, writes: bool) -> None:
        self.reads, self.writes = reads, writes

    # ------------------------------------------------------------- documents

    @property
    def supports_resource_operations(self) -> bool:
        return True  # created, deleted and renamed on disk

    def document(self, path: Path) -> DocumentSnapshot | None:
        snapshot = self._snapshots.get(Path(path).resolve())
        return DocumentSnapshot(Path(path).resolve(), snapshot.text, snapshot.version) if snapshot else None

    def open_documents(self) -> list[Path]:
        return list(self._snapshots)

    async def _client_text(self, session_id: str, path: Path) -> str | None:
        """The client's text of `path`, or None when it has none (no such file)."""
        try:
            await self._updates_sent(session_id)
            reply = await self.connection.read_text_file(session_id=session_id, path=str(path))
        except Exception as error:  # the client's error for a missing file, or a dropped connection
            log.debug("fs/read_text_file %s: %s", path, error)
            return None
        return reply.content

    def _remember(self, path: Path, text: str | None) -> None:
        snapshot = self._snapshots.get(path)
        if text is None:
            if snapshot is not None:
                snapshot.text, snapshot.version = "", snapshot.version + 1
            return
        if snapshot is None:
            self._snapshots[path] = _Snapshot(text, 1, 0)
        elif snapshot.text != text:
            snapshot.text, snapshot.version = text, snapshot.version + 1

    async def prefetch(self, session_id: str, path: Path) -> None:
        """Before a file tool runs: read the client's text of `path` (no-op without fs.readTextFile)."""
        if not self.reads:
            return
        path = path.resolve()
        text = await self._client_text(session_id, path)
        if text is None and path not in self._snapshots:
            return  # not a file the client knows: the tool reads the disk
        self._remember(path, text)
        if path in self._snapshots:
            self._snapshots[path].users += 1

    def release(self, path: Path) -> None:
        """After the file tool: its snapshot is dropped once no running call uses it,
        so a later tool never sees text older than the client's."""
        path = path.resolve()
        snapshot = self._snapshots.get(path)
        if snapshot is not None:
            snapshot.users -= 1
            if snapshot.users <= 0:
                del self._snapshots[path]

    # ------------------------------------------------------------------ edits

    async def apply_edit(self, operations: list[EditOperation], label: str, review: str | None = None) -> ApplyResult:
        session_id = current_session.get()
        if not (self.writes and session_id):
            return await self._on_disk(operations)
        try:
            for operation in operations:
                if isinstance(operation, TextFileEdit):
                    refused = await self._write_text(session_id, operation)
                    if refused:
                        return ApplyResult(False, refused)
                elif isinstance(operation, CreateFile):
                    path = self._confine(operation.path)
                    if path.exists() and not operation.overwrite:
                        if operation.ignore_if_exists:
                            continue
                        return ApplyResult(False, f"{visible_name(str(operation.path))} already exists")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    await self.connection.write_text_file(session_id=session_id, path=str(path), content="")
                    if path in self._snapshots:
                        self._remember(path, "")
                else:
                    result = await self._on_disk([operation])
                    if not result.applied:
                        return result
        except EditFailed as e:
            return ApplyResult(False, str(e))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the client answered with an error
            return ApplyResult(False, f"the editor refused the edit: {error}")
        return ApplyResult(True)

    async def _write_text(self, session_id: str, edit: TextFileEdit) -> str | None:
        """Write one text edit through the client; the reason when it is refused."""
        path = self._confine(edit.path)
        current = await self._client_text(session_id, path) if self.reads else None
        if current is None:
            current = path.read_text(encoding="utf-8") if path.is_file() else ""
        snapshot = self._snapshots.get(path)
        if snapshot is not None and edit.version is not None and (snapshot.version != edit.version or snapshot.text != current):
            self._remember(path, current)
            return f"{visible_name(str(edit.path))} changed in the editor since the agent read it"
        new_text = apply_text_edits(current, edit)
        await self.connection.write_text_file(session_id=session_id, path=str(path), content=new_text)
        if snapshot is not None:
            self._remember(path, new_text)
        return None

    async def _on_disk(self, operations: list[EditOperation]) -> ApplyResult:
        self._disk.roots = _roots(self._roots_of())
        return await self._disk.apply_edit(operations, "")

    def _confine(self, path: Path) -> Path:
        return _roots(self._roots_of()).resolve(path)

    async def save(self, paths: list[Path]) -> list[Path]:
        return []  # fs/write_text_file writes the file; disk edits are on disk

    # ------------------------------------------------------------- permission

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        session_id = request.session_id or current_session.get()
        if session_id is None:
            return "deny"
        tool_call = ToolCallUpdate(
            tool_call_id=current_call.get() or f"permission-{request.tool}",
            title=request.title if not request.detail else one_line(f"{request.title}: {request.detail}"),
            kind=_PERMISSION_KINDS.get(request.kind, "other"),
            status="pending",
            locations=[ToolCallLocation(path=str(request.path))] if request.path else None,
            raw_input={"command": request.command} if request.command else None,
            content=self._preview(request) or None,
        )
        try:
            await self._updates_sent(session_id)
            reply = await asyncio.wait_for(
                asyncio.shield(self.connection.request_permission(
                    session_id=session_id, tool_call=tool_call, options=list(PERMISSION_OPTIONS))),
                self.permission_timeout_s,
            )
        except Exception as error:
            # No answer in time, or a failed request, is not the user's "deny":
            # the permission policy says which it was to the model.
            if not isinstance(error, asyncio.TimeoutError):
                log.warning("session/request_permission failed: %s", error)
            raise
        outcome = reply.outcome
        if getattr(outcome, "outcome", None) != "selected":
            return "deny"
        return PERMISSION_ANSWERS.get(getattr(outcome, "option_id", ""), "deny")


    def _preview(self, request: PermissionRequest) -> list[Any]:
        """The diff of the file tool that asks, from the text it works on."""
        tool = current_tool.get()
        if tool is None or request.path is None or request.kind != "write":
            return []
        path = Path(request.path).resolve()
        snapshot = self._snapshots.get(path)
        if snapshot is not None:
            before: str | None = snapshot.text
        else:
            try:
                before = path.read_text(encoding="utf-8") if path.is_file() else None
            except (OSError, UnicodeDecodeError):
                return []
        return permission_diffs(tool[0], tool[1], path, before)


def _roots(paths: list[Path]) -> WorkspaceRoots:
    return WorkspaceRoots(paths or [Path.cwd()])
