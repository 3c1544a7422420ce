"""The language port: what language servers say about the workspace's documents.

The tools ask it; two sides can answer (docs/language.md): the workspace's own
language servers (`agent_lsp.language`), started as LSP clients, or, later, the
connected editor relaying to its own servers. Positions here are (line,
character) counted in code points, like every position inside agent_lsp;
whoever talks to a server converts to its encoding.

Nothing here imports pygls or lsprotocol: the tools see plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

Severity = Literal["error", "warning", "information", "hint"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "information": 2, "hint": 3}  # lower is worse


@dataclass(frozen=True)
class Problem:
    """One diagnostic. `line` and `character` are 0-based."""

    path: Path
    line: int
    character: int
    severity: Severity
    message: str
    source: str | None = None
    code: str | None = None
    line_text: str = ""  # the text of its line (how a problem is recognised after lines moved)

    def key(self) -> tuple[Any, ...]:
        """Equal for the same problem before and after an edit that moved its line."""
        return (self.path, self.severity, self.source, self.code, self.message, self.line_text.strip())


@dataclass(frozen=True)
class Location:
    path: Path
    line: int
    character: int
    end_line: int
    end_character: int
    line_text: str = ""


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str
    path: Path
    line: int
    character: int
    container: str | None = None
    depth: int = 0  # nesting in a document's outline


@dataclass(frozen=True)
class FileEdits:
    """A language server's edits of one file: (start, end, new text) in code points."""

    path: Path
    edits: tuple[tuple[tuple[int, int], tuple[int, int], str], ...]


@dataclass(frozen=True)
class CodeAction:
    title: str
    kind: str | None
    edits: tuple[FileEdits, ...]
    is_preferred: bool = False


@dataclass
class ProblemReport:
    """What an edit did to the problems the language servers report.

    `added`: problems of the changed files (and of files they broke) that were
    not there before; `fixed`: how many of the changed files' problems are gone;
    `existing`: problems of the changed files that were there already.
    `unknown`: why nothing trustworthy can be said (no server answered in time),
    in words for the model; then `added` is empty."""

    servers: list[str] = field(default_factory=list)
    added: list[Problem] = field(default_factory=list)
    fixed: int = 0
    existing: int = 0
    unknown: str | None = None
    pending: bool = False  # unknown because the servers did not report on the change (in time)
    baseline_missing: bool = False  # the problems before the edit were not known: all are shown as current
    incomplete: str | None = None  # why problems in other files may be missing (a server still checking), in words
    waited_ms: int = 0


class NoLanguageServer(Exception):
    """No language server can answer for this file; the message says why, for the model."""


class LanguageIntelligence(Protocol):
    """What the tools may ask of the language servers (implemented by
    `agent_lsp.language.intelligence.WorkspaceLanguage`)."""

    def serves(self, path: Path) -> bool:
        """A language server is configured and found for this file."""

    def touch(self, path: Path) -> None:
        """The agent is looking at this file: let its server get ready (no wait)."""

    async def before_change(self, paths: list[Path], texts: dict[Path, str | None] | None = None) -> Any:
        """Called before an edit of `paths`: what the problems are now (an opaque token).
        `texts`: the text of each path before the edit, when the edit already landed
        (a second opinion after the first side could not say)."""

    async def after_change(self, token: Any, changed: dict[Path, str | None]) -> ProblemReport | None:
        """The edit landed (`changed`: each path's new text, None if deleted): the
        problems it added or fixed. None: no server serves these files."""

    async def diagnostics(self, paths: list[Path], min_severity: Severity) -> dict[Path, list[Problem]]: ...

    async def definition(self, path: Path, position: tuple[int, int]) -> list[Location]: ...

    async def references(self, path: Path, position: tuple[int, int]) -> list[Location]: ...

    async def hover(self, path: Path, position: tuple[int, int]) -> str | None: ...

    async def document_symbols(self, path: Path) -> list[Symbol]: ...

    async def workspace_symbols(self, query: str) -> list[Symbol]: ...

    async def rename(self, path: Path, position: tuple[int, int], new_name: str) -> list[FileEdits]: ...

    async def code_actions(self, path: Path, line: int) -> list[CodeAction]: ...
