"""Applying an LSP WorkspaceEdit to files on disk, as an editor with no open
buffers would (the headless client's side of `workspace/applyEdit`).

Input is the JSON form of the edit (camelCase dicts). Positions are LSP
positions: a line number and a character offset counted in UTF-16 code units.
Text edits of one document all refer to the document as it was before the
edit, so they are applied together, not one after another.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from agent_lsp.tools.paths import file_uri_to_path
from agent_lsp.tools.text import OverlappingEdits, line_content, line_starts, replace_spans

UTF16 = PositionCodec(types.PositionEncodingKind.Utf16)  # the only encoding the headless client offers


class WorkspaceEditError(Exception):
    """One operation of the edit could not be applied (the message says why)."""


@dataclass
class AppliedEdit:
    """What `apply_workspace_edit` changed, for the transcript and the caller."""

    changed: list[Path] = field(default_factory=list)  # text edited, created, renamed-to
    deleted: list[Path] = field(default_factory=list)


def uri_to_path(uri: str) -> Path:
    try:
        return file_uri_to_path(uri)
    except ValueError as error:
        raise WorkspaceEditError(str(error)) from None


def _offset(text: str, starts: list[int], position: dict[str, Any]) -> int:
    line = int(position["line"])
    character = int(position["character"])
    if line < 0 or character < 0:
        raise WorkspaceEditError(f"negative position {position}")
    if line >= len(starts):
        return len(text)  # past the last line: the end of the document
    content = line_content(text, starts, line)
    if character >= UTF16.client_num_units(content):
        return starts[line] + len(content)  # past the end of the line: its end (LSP rule)
    column = UTF16.position_from_client_units([content], types.Position(line=0, character=character)).character
    return starts[line] + column


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """The text after applying LSP TextEdits (all relative to `text`).
    Inserts at the same position keep their array order; overlaps are refused."""
    starts = line_starts(text)
    spans = [
        (_offset(text, starts, edit["range"]["start"]), _offset(text, starts, edit["range"]["end"]), edit["newText"])
        for edit in edits
    ]
    try:
        return replace_spans(text, spans)
    except OverlappingEdits as error:
        raise WorkspaceEditError(str(error)) from None


def _read_text(path: Path) -> str:
    # newline="" keeps \r\n as is, so an edit never rewrites line endings.
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def _edit_file(path: Path, edits: list[dict[str, Any]]) -> None:
    if not path.is_file():
        raise WorkspaceEditError(f"cannot edit {path}: no such file")
    _write_text(path, apply_text_edits(_read_text(path), edits))


def _create_file(op: dict[str, Any]) -> Path:
    path = uri_to_path(op["uri"])
    options = op.get("options") or {}
    if path.exists():
        if options.get("ignoreIfExists") and not options.get("overwrite"):
            return path
        if not options.get("overwrite"):
            raise WorkspaceEditError(f"cannot create {path}: it already exists")
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_text(path, "")
    return path


def _rename_file(op: dict[str, Any]) -> Path:
    old = uri_to_path(op["oldUri"])
    new = uri_to_path(op["newUri"])
    options = op.get("options") or {}
    if not old.exists():
        raise WorkspaceEditError(f"cannot rename {old}: no such file")
    if new.exists():
        if options.get("ignoreIfExists") and not options.get("overwrite"):
            return new
        if not options.get("overwrite"):
            raise WorkspaceEditError(f"cannot rename to {new}: it already exists")
    new.parent.mkdir(parents=True, exist_ok=True)
    os.replace(old, new)
    return new


def _delete_file(op: dict[str, Any]) -> Path:
    path = uri_to_path(op["uri"])
    options = op.get("options") or {}
    if not path.exists():
        if options.get("ignoreIfNotExists"):
            return path
        raise WorkspaceEditError(f"cannot delete {path}: no such file")
    if path.is_dir():
        if not options.get("recursive") and any(path.iterdir()):
            raise WorkspaceEditError(f"cannot delete {path}: folder not empty")
        shutil.rmtree(path)
    else:
        path.unlink()
    return path


def apply_workspace_edit(edit: dict[str, Any]) -> AppliedEdit:
    """Apply a WorkspaceEdit (`documentChanges` in order, else `changes`).
    Stops at the first failing operation and raises WorkspaceEditError with
    `failed_change` set to its index."""
    applied = AppliedEdit()
    document_changes = edit.get("documentChanges")
    if document_changes is not None:
        for index, change in enumerate(document_changes):
            try:
                kind = change.get("kind")
                if kind == "create":
                    applied.changed.append(_create_file(change))
                elif kind == "rename":
                    applied.changed.append(_rename_file(change))
                elif kind == "delete":
                    applied.deleted.append(_delete_file(change))
                else:
                    path = uri_to_path(change["textDocument"]["uri"])
                    _edit_file(path, change.get("edits") or [])
                    applied.changed.append(path)
            except (OSError, KeyError, ValueError) as error:
                raise _failed(index, f"{type(error).__name__}: {error}") from error
            except WorkspaceEditError as error:
                raise _failed(index, str(error)) from error
        return applied
    for index, (uri, edits) in enumerate((edit.get("changes") or {}).items()):
        try:
            path = uri_to_path(uri)
            _edit_file(path, edits)
            applied.changed.append(path)
        except (OSError, KeyError, ValueError) as error:
            raise _failed(index, f"{type(error).__name__}: {error}") from error
        except WorkspaceEditError as error:
            raise _failed(index, str(error)) from error
    return applied


def _failed(index: int, message: str) -> WorkspaceEditError:
    error = WorkspaceEditError(message)
    error.failed_change = index  # type: ignore[attr-defined]
    return error
