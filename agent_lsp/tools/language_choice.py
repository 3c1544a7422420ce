"""The editor's language servers first, ours where the editor has none.

An editor that relays its own language servers (VS Code, Neovim, Emacs with
our plugins) answers on the live buffers with the user's servers and settings.
For a file it has no server for, it says so (`NoLanguageServer`), and the
workspace's own servers answer instead. The model sees one shape either way.

The problems of an edit: when the editor's servers did not report on the
change in time (some report only when the problems change), the workspace's
own servers, where they serve the files, check the text before and after the
edit instead; once they could say, they check the edits of that kind of file
from then on (the editor still answers the other questions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

from agent_lsp.tools.language_port import (
    CodeAction,
    FileEdits,
    LanguageIntelligence,
    Location,
    NoLanguageServer,
    Problem,
    ProblemReport,
    Severity,
    Symbol,
)

T = TypeVar("T")


class EditorFirst:
    """`editor` says, when first asked, whether the connected editor relays (None: the
    workspace's servers answer alone); it may be set again when an editor connects."""

    def __init__(self, editor: Callable[[], LanguageIntelligence | None] | None, own: LanguageIntelligence | None):
        self.editor_source = editor
        self._editor: LanguageIntelligence | None = None
        self.own = own
        self._declined: set[str] = set()  # file suffixes the editor has no server for
        self._unconfirmed: set[str] = set()  # file suffixes whose edits the editor could not confirm, and ours did

    @property
    def editor(self) -> LanguageIntelligence | None:
        if self._editor is None and self.editor_source is not None:
            self._editor = self.editor_source()  # the client's capabilities are known once it asks
        return self._editor

    def _own_first(self, path: Path) -> bool:
        return self.editor is None or (path.suffix in self._declined and self.own is not None)

    async def _ask(self, path: Path, ask: Callable[[LanguageIntelligence], Awaitable[T]]) -> T:
        if self.editor is not None and not self._own_first(path):
            try:
                return await ask(self.editor)
            except NoLanguageServer:
                if self.own is None:
                    raise
                self._declined.add(path.suffix)
        if self.own is None:
            raise NoLanguageServer("no language server here; use grep and read_file instead")
        return await ask(self.own)

    def serves(self, path: Path) -> bool:
        return (self.editor is not None and self.editor.serves(path)) or (self.own is not None and self.own.serves(path))

    def _own_checks_edits(self, path: Path) -> bool:
        return self._own_first(path) or (path.suffix in self._unconfirmed and self.own is not None)

    def touch(self, path: Path) -> None:
        if self.own is not None and self._own_checks_edits(path):
            self.own.touch(path)

    async def before_change(self, paths: list[Path], texts: dict[Path, str | None] | None = None) -> Any:
        if self.editor is None or (paths and self._own_checks_edits(paths[0])):
            if self.own is None or not any(self.own.serves(p) for p in paths):
                return ("none", None)
            return ("own", await self.own.before_change(paths, texts))
        try:
            return ("editor", await self.editor.before_change(paths))
        except NoLanguageServer:
            if self.own is None or not paths:
                return ("none", None)
            self._declined.add(paths[0].suffix)
            return ("own", await self.own.before_change(paths, texts))

    async def after_change(self, token: Any, changed: dict[Path, str | None]) -> ProblemReport | None:
        side, inner = token
        if side == "editor":
            report = await self.editor.after_change(inner, changed)
            if report is not None and report.pending:
                return await self._second_opinion(report, inner.texts, changed)
            return report
        if side == "own" and self.own is not None:
            return await self.own.after_change(inner, changed)
        return None

    async def _second_opinion(self, report: ProblemReport, texts: dict[Path, str | None],
                              changed: dict[Path, str | None]) -> ProblemReport:
        """The editor could not say in time: our servers check the text before the edit
        (`texts`, what the editor's baseline held) and after it."""
        served = [p for p in changed if self.own is not None and self.own.serves(p)]
        if not served or self.own is None:
            return report
        token = await self.own.before_change(served, {p: texts.get(p) for p in served})
        ours = await self.own.after_change(token, changed)
        if ours is None or ours.unknown is not None:
            return report
        self._unconfirmed.update(p.suffix for p in served)
        ours.waited_ms += report.waited_ms
        return ours

    async def diagnostics(self, paths: list[Path], min_severity: Severity) -> dict[Path, list[Problem]]:
        return await self._ask(paths[0] if paths else Path(), lambda side: side.diagnostics(paths, min_severity))

    async def definition(self, path: Path, position: tuple[int, int]) -> list[Location]:
        return await self._ask(path, lambda side: side.definition(path, position))

    async def references(self, path: Path, position: tuple[int, int]) -> list[Location]:
        return await self._ask(path, lambda side: side.references(path, position))

    async def hover(self, path: Path, position: tuple[int, int]) -> str | None:
        return await self._ask(path, lambda side: side.hover(path, position))

    async def document_symbols(self, path: Path) -> list[Symbol]:
        return await self._ask(path, lambda side: side.document_symbols(path))

    async def workspace_symbols(self, query: str) -> list[Symbol]:
        found = await self.editor.workspace_symbols(query) if self.editor is not None else []
        return found if found or self.own is None else await self.own.workspace_symbols(query)

    async def rename(self, path: Path, position: tuple[int, int], new_name: str) -> list[FileEdits]:
        return await self._ask(path, lambda side: side.rename(path, position, new_name))

    async def code_actions(self, path: Path, line: int) -> list[CodeAction]:
        return await self._ask(path, lambda side: side.code_actions(path, line))
