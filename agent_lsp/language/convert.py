"""lsprotocol's shapes to the language port's plain data, and positions between
code points (ours) and the encoding the other side speaks (UTF-16 for the
servers we run; the negotiated one for an editor that relays its own), by
pygls' PositionCodec over our own line model (agent_lsp.tools.text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from agent_lsp.tools.language_port import CodeAction, FileEdits, Location, Problem, Symbol
from agent_lsp.tools.paths import file_uri_to_path
from agent_lsp.tools.text import split_keepends

_SEVERITY = {lsp.DiagnosticSeverity.Error: "error", lsp.DiagnosticSeverity.Warning: "warning",
             lsp.DiagnosticSeverity.Information: "information", lsp.DiagnosticSeverity.Hint: "hint"}
Read = Callable[[Path], "str | None"]


def _lines(text: str) -> list[str]:
    return split_keepends(text) or [""]


def line_text(lines: list[str], line: int) -> str:
    return lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""


def path_of(uri: str) -> Path | None:
    """The local path of a file URI; None for another scheme or host."""
    try:
        return file_uri_to_path(uri)
    except ValueError:
        return None


class Converter:
    """Conversions for one side: `read` gives a file's text (to count positions in
    it), `encoding` is the side's position encoding."""

    def __init__(self, read: Read, encoding: str = lsp.PositionEncodingKind.Utf16):
        self.read = read
        self.codec = PositionCodec(lsp.PositionEncodingKind(encoding))

    def to_server(self, text: str, position: tuple[int, int]) -> lsp.Position:
        point = lsp.Position(line=position[0], character=position[1])
        return self.codec.position_to_client_units(_lines(text), point)

    def from_server(self, lines: list[str], position: lsp.Position) -> tuple[int, int]:
        if position.line >= len(lines):
            return position.line, position.character
        point = self.codec.position_from_client_units(lines, position)
        return point.line, point.character

    def line_end(self, text: str, line: int) -> lsp.Position:
        return self.to_server(text, (line, len(line_text(_lines(text), line))))

    def problem(self, path: Path, text: str, diagnostic: lsp.Diagnostic) -> Problem:
        lines = _lines(text)
        line, character = self.from_server(lines, diagnostic.range.start)
        code = diagnostic.code
        severity = _SEVERITY.get(diagnostic.severity, "error") if diagnostic.severity else "error"
        return Problem(path=path, line=line, character=character, severity=severity,  # type: ignore[arg-type]
                       message=diagnostic.message, source=diagnostic.source,
                       code=None if code is None else str(code), line_text=line_text(lines, line))

    def problems(self, path: Path, text: str, diagnostics: list[lsp.Diagnostic]) -> list[Problem]:
        return [self.problem(path, text, d) for d in diagnostics]

    def location(self, uri: str, range_: lsp.Range) -> Location | None:
        path = path_of(uri)
        if path is None:
            return None
        lines = _lines(self.read(path) or "")
        start, end = self.from_server(lines, range_.start), self.from_server(lines, range_.end)
        return Location(path, start[0], start[1], end[0], end[1], line_text(lines, start[0]).strip())

    def locations(self, result: Any) -> list[Location]:
        if result is None:
            return []
        items = result if isinstance(result, (list, tuple)) else [result]
        found = []
        for item in items:
            if isinstance(item, lsp.LocationLink):
                found.append(self.location(item.target_uri, item.target_selection_range))
            elif isinstance(item, lsp.Location):
                found.append(self.location(item.uri, item.range))
        return [f for f in found if f is not None]

    def symbols(self, result: Any, path: Path | None, depth: int = 0, container: str | None = None) -> list[Symbol]:
        found: list[Symbol] = []
        lines = _lines(self.read(path) or "") if path is not None else []
        for item in result or ():
            kind = lsp.SymbolKind(item.kind).name if item.kind in lsp.SymbolKind._value2member_map_ else str(item.kind)
            if isinstance(item, lsp.DocumentSymbol) and path is not None:
                line, character = self.from_server(lines, item.selection_range.start)
                found.append(Symbol(item.name, kind, path, line, character, container, depth))
                found += self.symbols(item.children or [], path, depth + 1, item.name)
            elif isinstance(item, (lsp.SymbolInformation, lsp.WorkspaceSymbol)):
                where = item.location
                if not isinstance(where, lsp.Location):
                    continue
                found_at = self.location(where.uri, where.range)
                if found_at is not None:
                    found.append(Symbol(item.name, kind, found_at.path, found_at.line, found_at.character,
                                        item.container_name or None))
        return found

    def _file_edits(self, uri: str, edits: Any) -> FileEdits | None:
        path = path_of(uri)
        if path is None:
            return None
        lines = _lines(self.read(path) or "")
        converted = [(self.from_server(lines, e.range.start), self.from_server(lines, e.range.end), e.new_text)
                     for e in edits if isinstance(e, (lsp.TextEdit, lsp.AnnotatedTextEdit))]
        return FileEdits(path, tuple(converted))

    def workspace_edit(self, edit: lsp.WorkspaceEdit | None) -> list[FileEdits]:
        """The text edits of a WorkspaceEdit, per file (file operations are not part of
        what a rename or quick fix of ours applies)."""
        if edit is None:
            return []
        found: list[FileEdits | None] = []
        if edit.document_changes:
            for change in edit.document_changes:
                if isinstance(change, lsp.TextDocumentEdit):
                    found.append(self._file_edits(change.text_document.uri, change.edits))
        elif edit.changes:
            for uri, edits in edit.changes.items():
                found.append(self._file_edits(uri, edits))
        return [f for f in found if f is not None and f.edits]

    def code_actions(self, result: Any) -> list[CodeAction]:
        actions = []
        for item in result or ():
            if isinstance(item, lsp.CodeAction) and item.edit is not None and not item.disabled:
                edits = self.workspace_edit(item.edit)
                if edits:
                    kind = item.kind.value if isinstance(item.kind, lsp.CodeActionKind) else item.kind
                    actions.append(CodeAction(item.title, kind, tuple(edits), bool(item.is_preferred)))
        return actions


def hover_text(result: lsp.Hover | None) -> str | None:
    if result is None:
        return None
    contents = result.contents
    parts = contents if isinstance(contents, (list, tuple)) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, (lsp.MarkupContent, lsp.MarkedStringWithLanguage)):
            texts.append(part.value)
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts).strip() or None
