"""write_file, create_file, delete_file, rename_file.

Through the editor when it can: file creation, deletion and renaming go out
as resource operations (`CreateFile`, `DeleteFile`, `RenameFile` in one
`workspace/applyEdit`) when the editor declares
`workspace.workspaceEdit.resourceOperations`; text always goes as a versioned
text edit, so an open buffer is changed in the editor (undoable), then saved.

Fallback, for editors without resource operations: the tool creates, deletes
or renames the file on disk itself. For a file the editor has open, the
output says so: the buffer may still show the old path or text.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import Field

from agent_lsp.agent.ports import (
    ApplyResult,
    CreateFile,
    Editor,
    DeleteFile,
    PermissionRequest,
    RenameFile,
    TextEdit,
    TextFileEdit,
    ToolContext,
    ToolOutput,
)
from agent_lsp.tools.base import BuiltinTool, ToolEnv, ToolError, ToolInput, read_text, unless_aborted
from agent_lsp.tools.edit import PENDING_REVIEW_NOTE, apply_text_change, unsaved_note
from agent_lsp.tools.hunks import unified_diff
from agent_lsp.tools.journal_record import FileChange
from agent_lsp.tools.problems import problems_before, with_problems

# ------------------------------------------------- resource operations
# Through the editor when it supports resource operations, else on disk.
# The journal's revert uses these too.


async def create_with_content(editor: Editor, path: Path, content: str, label: str) -> ApplyResult:
    if editor.supports_resource_operations:
        operations: list = [CreateFile(path)]
        if content:
            operations.append(TextFileEdit(path, (TextEdit((0, 0), (0, 0), content),), None))
        result = await editor.apply_edit(operations, label)
        if result.applied:
            await editor.save([path])
        return result
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8", newline="") as f:
            f.write(content)
    except OSError as e:
        return ApplyResult(False, e.strerror or str(e))
    return ApplyResult(True)


async def delete_path(editor: Editor, path: Path, label: str) -> ApplyResult:
    if editor.supports_resource_operations:
        return await editor.apply_edit([DeleteFile(path)], label)
    try:
        path.unlink()
    except OSError as e:
        return ApplyResult(False, e.strerror or str(e))
    return ApplyResult(True)


async def rename_path(editor: Editor, old: Path, new: Path, label: str) -> ApplyResult:
    if editor.supports_resource_operations:
        return await editor.apply_edit([RenameFile(old, new)], label)
    try:
        new.parent.mkdir(parents=True, exist_ok=True)
        if new.exists():
            return ApplyResult(False, f"{new} already exists")
        os.rename(old, new)
    except OSError as e:
        return ApplyResult(False, e.strerror or str(e))
    return ApplyResult(True)


def _exists(env: ToolEnv, path: Path) -> bool:
    return path.exists() or env.editor.document(path) is not None


def _waiting(env: ToolEnv, what: str) -> str:
    return (
        f"The turn was cancelled while the editor was {what}; its answer was dropped. The editor may "
        "still do it: look before trying again."
    )


async def _create(env: ToolEnv, ctx: ToolContext, path: Path, content: str) -> dict:
    shown = env.show(path)
    result = await unless_aborted(
        ctx, create_with_content(env.editor, path, content, f"agent: create {shown}"), _waiting(env, f"creating {shown}")
    )
    if not result.applied:
        raise ToolError(f"could not create {shown}: {result.failure_reason or 'refused'}", "EDIT_REJECTED")
    return env.record(ctx, FileChange(path, None, content))


def _text_of(env: ToolEnv, path: Path) -> str | None:
    try:
        return read_text(env, path, env.show(path)).text
    except ToolError:
        return None


# a line break, a control character or a bidi override in a new name would make every
# question and result that names the file show something other than its name
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _check_parent(env: ToolEnv, path: Path) -> None:
    """The folders above `path` (created when missing) and the names this creates."""
    created = [] if path.exists() else [path]
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ToolError(f"'{env.show(parent)}' is a file, not a folder", "NOT_A_DIRECTORY")
            break
        created.append(parent)
    for new in created:
        if _UNSHOWABLE.search(new.name):
            raise ToolError(f"refused to create {new.name!r}: a file name with a line break, a control character "
                            "or a bidi override would show as something other than it is", "BAD_NAME")


# --------------------------------------------------------------- write_file


class WriteFileInput(ToolInput):
    path: str
    content: str = Field(description="the whole new content")


class WriteFile(BuiltinTool):
    name = "write_file"
    description = (
        "Write a whole file, creating it (and its folders) if needed. For changes to an existing "
        "file use edit_file."
    )
    input_model = WriteFileInput

    async def execute(self, args: WriteFileInput, ctx: ToolContext) -> ToolOutput:
        path = self.env.resolve(args.path)
        shown = self.env.show(path)
        if path.is_dir():
            raise ToolError(f"'{shown}' is a folder", "IS_DIRECTORY")
        _check_parent(self.env, path)
        await self.env.authorize(
            ctx, PermissionRequest(tool=self.name, title=f"Write {shown}", kind="write", path=path)
        )
        language = self.env.edit_language
        if not _exists(self.env, path):
            checked = await problems_before(language, [path])
            record = await _create(self.env, ctx, path, args.content)
            lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
            output = ToolOutput(
                content=f"Created {shown} ({lines} lines).", meta={"path": shown, "created": True, "journal": [record]}
            )
            return await with_problems(language, checked, {path: args.content}, output, self.env.show)
        file = read_text(self.env, path, shown)
        if file.text == args.content:
            return ToolOutput(content=f"{shown} already has this content; nothing changed.", meta={"path": shown})
        whole = [(0, len(file.text), args.content)]
        checked = await problems_before(language, [path])
        applied = await apply_text_change(self.env, ctx, file, whole, args.content, f"agent: write {shown}", exact=False)
        diff = unified_diff(file.text, args.content, shown)
        note = f" {PENDING_REVIEW_NOTE}" if applied.pending else f" {unsaved_note([shown])}" if applied.unsaved else ""
        output = ToolOutput(content=f"Wrote {shown}.{note}", meta={"path": shown, "diff": diff, "journal": [applied.record]})
        return await with_problems(language, checked, {path: args.content}, output, self.env.show)


# -------------------------------------------------------------- create_file


class CreateFileInput(ToolInput):
    path: str
    content: str = ""


class CreateFileTool(BuiltinTool):
    name = "create_file"
    description = "Create a new file (and its folders); fails if it exists."
    input_model = CreateFileInput

    async def execute(self, args: CreateFileInput, ctx: ToolContext) -> ToolOutput:
        path = self.env.resolve(args.path)
        shown = self.env.show(path)
        if _exists(self.env, path) or path.is_symlink():
            raise ToolError(f"'{shown}' already exists; use edit_file or write_file", "ALREADY_EXISTS")
        _check_parent(self.env, path)
        await self.env.authorize(
            ctx, PermissionRequest(tool=self.name, title=f"Create {shown}", kind="write", path=path)
        )
        checked = await problems_before(self.env.edit_language, [path])
        record = await _create(self.env, ctx, path, args.content)
        output = ToolOutput(content=f"Created {shown}.", meta={"path": shown, "created": True, "journal": [record]})
        return await with_problems(self.env.edit_language, checked, {path: args.content}, output, self.env.show)


# -------------------------------------------------------------- delete_file


class DeleteFileInput(ToolInput):
    path: str


class DeleteFileTool(BuiltinTool):
    name = "delete_file"
    description = "Delete one file (not a folder)."
    input_model = DeleteFileInput

    async def execute(self, args: DeleteFileInput, ctx: ToolContext) -> ToolOutput:
        path = self.env.resolve(args.path)
        shown = self.env.show(path)
        if path.is_dir():
            raise ToolError(f"'{shown}' is a folder; delete_file deletes files only", "IS_DIRECTORY")
        if not path.exists():
            raise ToolError(f"'{shown}' does not exist", "NOT_FOUND")
        await self.env.authorize(
            ctx, PermissionRequest(tool=self.name, title=f"Delete {shown}", kind="delete", path=path)
        )
        try:
            before: str | None = read_text(self.env, path, shown).text
        except ToolError:
            before = None  # binary or unreadable: revert cannot bring it back
        checked = await problems_before(self.env.edit_language, [path])
        result = await unless_aborted(
            ctx, delete_path(self.env.editor, path, f"agent: delete {shown}"), _waiting(self.env, f"deleting {shown}")
        )
        if not result.applied:
            raise ToolError(f"could not delete {shown}: {result.failure_reason or 'refused'}", "EDIT_REJECTED")
        note = ""
        if not self.env.editor.supports_resource_operations and self.env.editor.document(path) is not None:
            note = " The editor still has it open; its buffer was not closed."
        meta: dict = {"path": shown, "deleted": True}
        if before is not None:
            meta["journal"] = [self.env.record(ctx, FileChange(path, before, None))]
        else:
            note += " (Not text: reverting this turn will not restore it.)"
        output = ToolOutput(content=f"Deleted {shown}.{note}", meta=meta)
        return await with_problems(self.env.edit_language, checked, {path: None}, output, self.env.show)


# -------------------------------------------------------------- rename_file


class RenameFileInput(ToolInput):
    path: str
    new_path: str = Field(description="must not exist; missing folders are created")


class RenameFileTool(BuiltinTool):
    name = "rename_file"
    description = "Rename or move a file or folder inside the workspace."
    input_model = RenameFileInput

    async def execute(self, args: RenameFileInput, ctx: ToolContext) -> ToolOutput:
        source = self.env.resolve(args.path)
        target = self.env.resolve(args.new_path)
        old, new = self.env.show(source), self.env.show(target)
        if not source.exists():
            raise ToolError(f"'{old}' does not exist", "NOT_FOUND")
        if target.exists() or target.is_symlink():
            raise ToolError(f"'{new}' already exists", "ALREADY_EXISTS")
        if target.is_relative_to(source):
            raise ToolError(f"cannot move '{old}' into itself", "BAD_TARGET")
        _check_parent(self.env, target)
        await self.env.authorize(
            ctx,
            PermissionRequest(tool=self.name, title=f"Rename {old} to {new}", kind="write", path=source,
                              detail=f"{old} -> {new}"),
        )
        moved = [source] if source.is_file() else []
        checked = await problems_before(self.env.edit_language, moved)
        result = await unless_aborted(
            ctx, rename_path(self.env.editor, source, target, f"agent: rename {old}"), _waiting(self.env, f"renaming {old}")
        )
        if not result.applied:
            raise ToolError(f"could not rename {old}: {result.failure_reason or 'refused'}", "EDIT_REJECTED")
        note = ""
        if not self.env.editor.supports_resource_operations and self.env.editor.document(source) is not None:
            note = " The editor still has the old path open."
        record = self.env.record(ctx, FileChange(source, None, None, new_path=target))
        output = ToolOutput(
            content=f"Renamed {old} to {new}.{note}", meta={"path": old, "newPath": new, "journal": [record]}
        )
        changed: dict[Path, str | None] = {source: None}
        if moved:
            changed[target] = _text_of(self.env, target)
        return await with_problems(self.env.edit_language, checked, changed if moved else {}, output, self.env.show)
