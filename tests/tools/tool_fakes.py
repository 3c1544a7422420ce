"""Test doubles for the tool tests: a tool context, an editor that simulates open
buffers with versions (what an LSP client holds), and a by-name tool runner."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from agent_lsp.agent.ports import (
    ApplyResult,
    DeleteFile,
    DocumentSnapshot,
    EditOperation,
    RenameFile,
    TextFileEdit,
    ToolOutput,
)
from agent_lsp.tools import build_tools
from agent_lsp.workspace.disk_editor import DiskEditor, apply_text_edits


@dataclass
class Signal:
    aborted: bool = False
    reason: Any = None


@dataclass
class Ctx:
    """The part of the agent a tool sees."""

    call_id: str = "call_1"
    name: str = "tool"
    turn: int = 1
    step: int = 1
    session_id: str = "s_test"
    signal: Signal = field(default_factory=Signal)
    progress_events: list[dict] = field(default_factory=list)

    def steer(self, content: str) -> None: ...

    def inject(self, content: str) -> None: ...

    def conclude_turn(self) -> None: ...

    def progress(self, data: dict) -> None:
        self.progress_events.append(data)


class BufferEditor(DiskEditor):
    """An editor with open buffers: text + version per open file, unsaved until saved.

    `before_apply` runs when an edit arrives, before the version check, to
    simulate the user typing during the applyEdit round trip."""

    def __init__(self, roots, **kwargs):
        super().__init__(roots, **kwargs)
        self.buffers: dict[Path, list] = {}  # path -> [text, version]
        self.saved: list[Path] = []
        self.applied: list[tuple[list[EditOperation], str]] = []
        self.before_apply: Callable[[], None] | None = None

    def open(self, path: Path, text: str | None = None) -> None:
        self.buffers[path] = [path.read_text() if text is None else text, 1]

    def type(self, path: Path, text: str) -> None:
        """The user changes the buffer (not saved)."""
        self.buffers[path][0] = text
        self.buffers[path][1] += 1

    def document(self, path: Path) -> DocumentSnapshot | None:
        if path in self.buffers:
            text, version = self.buffers[path]
            return DocumentSnapshot(path, text, version)
        return None

    def open_documents(self) -> list[Path]:
        return list(self.buffers)

    async def save(self, paths: list[Path]) -> list[Path]:
        for path in paths:
            if path in self.buffers:
                path.write_text(self.buffers[path][0])
                self.saved.append(path)
        return []

    async def apply_edit(self, operations: list[EditOperation], label: str, review: str | None = None) -> ApplyResult:
        if self.before_apply is not None:
            hook, self.before_apply = self.before_apply, None
            hook()
        self.applied.append((operations, label))
        for op in operations:
            if isinstance(op, TextFileEdit) and op.path in self.buffers:
                text, version = self.buffers[op.path]
                if op.version != version:
                    return ApplyResult(False, f"version mismatch: buffer at {version}, edit for {op.version}")
                self.buffers[op.path] = [apply_text_edits(text, op), version + 1]
            else:
                if isinstance(op, DeleteFile):
                    self.buffers.pop(op.path, None)
                if isinstance(op, RenameFile) and op.old_path in self.buffers:
                    self.buffers[op.new_path] = self.buffers.pop(op.old_path)
                result = await super().apply_edit([op], label)
                if not result.applied:
                    return result
        return ApplyResult(True)


class Tools:
    """Run tools by name with camelCase arguments, as the agent loop does."""

    def __init__(self, editor, roots, **kwargs):
        self.editor = editor
        self.by_name = {t.name: t for t in build_tools(editor, roots, **kwargs)}

    async def __call__(self, name: str, ctx: Ctx | None = None, **arguments) -> ToolOutput:
        tool = self.by_name[name]
        args = tool.input_model.model_validate(arguments)
        return await tool.run(args, ctx or Ctx())


