"""lsprotocol's shapes to the language port's plain data, and positions between
code points (ours) and UTF-16 (what our servers are asked to speak), by pygls'
PositionCodec over our own line model (agent_lsp.tools.text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from agent_lsp.tools.language_port import CodeAction, FileEdits, Location, Problem, Symbol
from agent_lsp.tools.paths import file_uri_to_path
from agent_lsp.tools.text import split_keepends

_CODEC = PositionCodec(lsp.PositionEncodingKind.Utf16)
_SEVERITY = {lsp.DiagnosticSeverity.Error: "error", lsp.DiagnosticSeverity.Warning: "warning",
             lsp.DiagnosticSeverity.Information: "information", lsp.DiagnosticSeverity.Hint: "hint"}
Read = Callable[[Path], "str | None"]


def _lines(text: str) -> list[str]:
    return split_keepends(text) or [""]


def to_server(text: str, position: tuple[int, int]) -> lsp.Position:
    return _CODEC.position_to_client_units(_lines(text), lsp.Position(line=position[0], character=position[1]))


def from_server(lines: list[str], position: lsp.Position) -> tuple[int, int]:
    if position.line >= len(lines):
        return position.line, position.character
    point = _CODEC.position_from_client_units(lines, position)
    return point.line, point.character


def line_text(lines: list[str], line: int) -> str:
    return lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""


def line_end(text: str, line: int) -> lsp.Position:
    lines = _lines(text)
    return to_server(text, (line, len(line_text(lines, line))))


def problem(path: Path, text: str, diagnostic: lsp.Diagnostic) -> Problem:
    lines = _lines(text)
    line, character = from_server(lines, diagnostic.range.start)
    code = diagnostic.code
    return Problem(
        path=path, line=line, character=character,
        severity=_SEVERITY.get(diagnostic.severity, "error") if diagnostic.severity else "error",  # type: ignore[arg-type]
        message=diagnostic.message, source=diagnostic.source, code=None if code is None else str(code),
        line_text=line_text(lines, line),
    )


def _path(uri: str) -> Path | None:
    try:
        return file_uri_to_path(uri)
    except ValueError:
        return None


def location(uri: str, range_: lsp.Range, read: Read) -> Location | None:
    path = _path(uri)
    if path is None:
        return None
    lines = _lines(read(path) or "")
    start, end = from_server(lines, range_.start), from_server(lines, range_.end)
    return Location(path, start[0], start[1], end[0], end[1], line_text(lines, start[0]).strip())


def locations(result: Any, read: Read) -> list[Location]:
    if result is None:
        return []
    items = result if isinstance(result, (list, tuple)) else [result]
    found = []
    for item in items:
        if isinstance(item, lsp.LocationLink):
            found.append(location(item.target_uri, item.target_selection_range, read))
        elif isinstance(item, lsp.Location):
            found.append(location(item.uri, item.range, read))
    return [f for f in found if f is not None]


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


def symbols(result: list[Any], path: Path | None, text: str, read: Read, depth: int = 0,
            container: str | None = None) -> list[Symbol]:
    found: list[Symbol] = []
    lines = _lines(text)
    for item in result:
        kind = lsp.SymbolKind(item.kind).name if item.kind in lsp.SymbolKind._value2member_map_ else str(item.kind)
        if isinstance(item, lsp.DocumentSymbol) and path is not None:
            line, character = from_server(lines, item.selection_range.start)
            found.append(Symbol(item.name, kind, path, line, character, container, depth))
            found += symbols(item.children or [], path, text, read, depth + 1, item.name)
        elif isinstance(item, (lsp.SymbolInformation, lsp.WorkspaceSymbol)):
            where = item.location
            if not isinstance(where, lsp.Location):
                continue
            found_at = location(where.uri, where.range, read)
            if found_at is not None:
                found.append(Symbol(item.name, kind, found_at.path, found_at.line, found_at.character,
                                    item.container_name or None))
    return found


def _file_edits(uri: str, edits: list[Any], read: Read) -> FileEdits | None:
    path = _path(uri)
    if path is None:
        return None
    lines = _lines(read(path) or "")
    converted = []
    for edit in edits:
        if isinstance(edit, (lsp.TextEdit, lsp.AnnotatedTextEdit)):
            converted.append((from_server(lines, edit.range.start), from_server(lines, edit.range.end), edit.new_text))
    return FileEdits(path, tuple(converted))


def workspace_edit(edit: lsp.WorkspaceEdit | None, read: Read) -> list[FileEdits]:
    """The text edits of a WorkspaceEdit, per file (file operations are not part of
    what a rename or quick fix of ours applies)."""
    if edit is None:
        return []
    found: list[FileEdits | None] = []
    if edit.document_changes:
        for change in edit.document_changes:
            if isinstance(change, lsp.TextDocumentEdit):
                found.append(_file_edits(change.text_document.uri, list(change.edits), read))
    elif edit.changes:
        for uri, edits in edit.changes.items():
            found.append(_file_edits(uri, list(edits), read))
    return [f for f in found if f is not None and f.edits]


def code_actions(result: list[Any], read: Read) -> list[CodeAction]:
    actions = []
    for item in result:
        if isinstance(item, lsp.CodeAction) and item.edit is not None and not item.disabled:
            edits = workspace_edit(item.edit, read)
            if edits:
                kind = item.kind.value if isinstance(item.kind, lsp.CodeActionKind) else item.kind
                actions.append(CodeAction(item.title, kind, tuple(edits), bool(item.is_preferred)))
    return actions
