"""DiskEditor: an Editor with no open buffers that applies edits straight to disk.

Used when no editor owns the files (benchmarks, tests, headless fallback).
Every path is confined to the roots. The operations of one `apply_edit` are
applied in order; a failure stops there and reports `applied: False` with
the reason (earlier operations stay applied). Text edits carry no version
check here: nothing is open, so the disk text is the only text.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

from agent_lsp.agent.ports import (
    ApplyResult,
    CreateFile,
    DeleteFile,
    DocumentSnapshot,
    EditOperation,
    PermissionAnswer,
    PermissionRequest,
    RenameFile,
    TextFileEdit,
)
from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots
from agent_lsp.tools.text import OverlappingEdits, line_starts, offset_of, replace_spans
from agent_lsp.visible import visible_name


class EditFailed(Exception):
    pass


def apply_text_edits(text: str, edit: TextFileEdit) -> str:
    """The text after `edit`'s ranges are replaced (ranges refer to `text`; no
    overlaps). As in LSP, inserts at the same position keep their array order."""
    starts = line_starts(text)
    spans = [(offset_of(text, starts, e.start), offset_of(text, starts, e.end), e.new_text) for e in edit.edits]
    try:
        return replace_spans(text, spans)
    except OverlappingEdits:
        raise EditFailed(f"overlapping or inverted ranges in the edit of {visible_name(str(edit.path))}") from None


class DiskEditor:
    holds_unsaved_text = False  # what it edits is on disk (the review finds held edits there)

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        resource_operations: bool = True,
        permission_answer: PermissionAnswer | Callable[[PermissionRequest], PermissionAnswer] = "deny",
    ):
        self.roots = WorkspaceRoots(roots)
        self._resource_operations = resource_operations
        self._permission_answer = permission_answer
        self.permission_requests: list[PermissionRequest] = []

    @property
    def supports_resource_operations(self) -> bool:
        return self._resource_operations

    def document(self, path: Path) -> DocumentSnapshot | None:
        return None

    def open_documents(self) -> list[Path]:
        return []

    async def save(self, paths: list[Path]) -> list[Path]:
        return []  # everything is on disk already

    async def ask_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.permission_requests.append(request)
        answer = self._permission_answer
        return answer(request) if callable(answer) else answer

    async def apply_edit(self, operations: list[EditOperation], label: str, review: str | None = None) -> ApplyResult:
        try:
            for operation in operations:
                self._apply(operation)
        except (EditFailed, OutsideWorkspaceError) as e:
            return ApplyResult(False, str(e))
        except OSError as e:
            return ApplyResult(False, f"{e.strerror}: {visible_name(str(e.filename))}")
        return ApplyResult(True)

    # ------------------------------------------------------------- operations

    def _confine(self, path: Path) -> Path:
        return self.roots.resolve(path)

    def _apply(self, operation: EditOperation) -> None:
        if isinstance(operation, TextFileEdit):
            self._edit_text(operation)
        elif isinstance(operation, CreateFile):
            self._create(operation)
        elif isinstance(operation, DeleteFile):
            self._delete(operation)
        elif isinstance(operation, RenameFile):
            self._rename(operation)
        else:
            raise EditFailed(f"unknown operation {operation!r}")

    def _edit_text(self, edit: TextFileEdit) -> None:
        path = self._confine(edit.path)
        if not path.is_file():
            raise EditFailed(f"{visible_name(str(edit.path))} does not exist")
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise EditFailed(f"{visible_name(str(edit.path))} is not UTF-8 text") from None
        write_text(path, apply_text_edits(text, edit))

    def _create(self, op: CreateFile) -> None:
        path = self._confine(op.path)
        if path.exists():
            if op.ignore_if_exists and not op.overwrite:
                return
            if not op.overwrite:
                raise EditFailed(f"{visible_name(str(op.path))} already exists")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, "")

    def _delete(self, op: DeleteFile) -> None:
        path = self._confine(op.path)
        if path.is_dir() and not path.is_symlink():
            if op.recursive:
                shutil.rmtree(path)
            else:
                path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
        else:
            raise EditFailed(f"{visible_name(str(op.path))} does not exist")

    def _rename(self, op: RenameFile) -> None:
        old, new = self._confine(op.old_path), self._confine(op.new_path)
        if not old.exists():
            raise EditFailed(f"{visible_name(str(op.old_path))} does not exist")
        if new.exists() and not op.overwrite:
            raise EditFailed(f"{visible_name(str(op.new_path))} already exists")
        new.parent.mkdir(parents=True, exist_ok=True)
        os.replace(old, new)


def write_text(path: Path, text: str) -> None:
    """Write through a temporary file so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.agent-lsp-tmp")
    tmp.write_bytes(text.encode("utf-8"))
    try:
        mode = path.stat().st_mode
        os.chmod(tmp, mode)
    except FileNotFoundError:
        pass
    os.replace(tmp, path)


def write_text_if_changed(path: Path, text: str) -> bool:
    """Write `text` unless the file holds it already (an unchanged file keeps its
    modification time, so editors do not report it as changed on disk). True when written."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    write_text(path, text)
    return True
