"""The editor port of a folder on the agent host, whose window may leave.

On the agent host (`agent_lsp.daemon`) a session's turn may outlive the
window that opened it, when another window follows the session
(`agent_lsp.workspace.shared_sessions`). The folder's tools hold this
forwarder, not the window's editor: while a window is there everything goes
to it; once it has left, the session's edits go through a window that follows
the session (switched to by the registry), or, with none, straight to disk
(version checks have nothing open to check against), and a permission
question waits up to `wait_s` for a window to come, then counts as
unanswered.

A permission question is asked in the window and in every other window that
follows the session (`others`): the first answer wins, and the windows that
did not answer are told so (`permission_settled`), so their card goes away.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence

from agent_lsp.agent.ports import ApplyResult, DocumentSnapshot, EditOperation, PermissionAnswer, PermissionRequest
from agent_lsp.workspace.disk_editor import DiskEditor


class WindowEditor:
    def __init__(self, target: Any, roots: Sequence[Path], *, wait_s: float = 600.0):
        self.target = target  # the window's editor; None once no window shows the folder's sessions
        self.disk = DiskEditor(roots)
        self.wait_s = wait_s
        self.others: Callable[[str | None], list[Any]] = lambda session_id: []  # the editors of the windows following it
        self._arrived: asyncio.Event | None = None  # made by the first question asked with no window

    def switch(self, target: Any) -> None:
        """From now on, `target` (another window's editor, or None: nobody)."""
        self.target = target
        if target is not None and self._arrived is not None:
            self._arrived.set()
            self._arrived = None

    def __getattr__(self, name: str) -> Any:  # what else a window's editor offers (elicit, open_url, ...)
        target = self.__dict__.get("target")
        if target is None:
            raise AttributeError(name)
        return getattr(target, name)

    @property
    def supports_resource_operations(self) -> bool:
        return self.target.supports_resource_operations if self.target is not None else True

    def document(self, path: Path) -> DocumentSnapshot | None:
        return self.target.document(path) if self.target is not None else None

    def open_documents(self) -> list[Path]:
        return self.target.open_documents() if self.target is not None else []

    async def apply_edit(self, operations: list[EditOperation], label: str, review: str | None = None) -> ApplyResult:
        target = self.target if self.target is not None else self.disk
        return await target.apply_edit(operations, label, review)

    async def save(self, paths: list[Path]) -> list[Path]:
        return await self.target.save(paths) if self.target is not None else []

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        if self.target is None and not self.others(request.session_id):
            if self._arrived is None:
                self._arrived = asyncio.Event()
            # no answer in time raises, as a window's own timeout does: the policy says nobody answered
            await asyncio.wait_for(self._arrived.wait(), self.wait_s)
        editors = [e for e in [self.target, *self.others(request.session_id)] if e is not None]
        editors = [e for i, e in enumerate(editors) if e not in editors[:i]]
        if len(editors) == 1:
            return await editors[0].ask_permission(request)
        return await first_answer(dataclasses.replace(request, permission_id=uuid.uuid4().hex[:16]), editors)


async def first_answer(request: PermissionRequest, editors: list[Any]) -> PermissionAnswer:
    """Ask every editor; the first answer wins and the others are told. Raises
    the first failure when no editor answered."""
    asked = {asyncio.ensure_future(editor.ask_permission(request)): editor for editor in editors}
    pending = set(asked)
    failure: BaseException | None = None
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                error = task.exception()
                if error is None:
                    answer = task.result()
                    for editor in asked.values():
                        settled = getattr(editor, "permission_settled", None)
                        if editor is not asked[task] and settled is not None:
                            settled(request, answer)
                    return answer
                failure = failure or error
        assert failure is not None
        raise failure
    finally:
        for task in pending:
            task.cancel()
