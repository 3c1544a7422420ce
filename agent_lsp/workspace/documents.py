"""Open documents over disk: what the tools see of a file.

The editor owns open buffers: their text may differ from the file on disk
(unsaved changes). The LSP layer feeds didOpen/didChange/didClose into
`Documents`; tools read through `read()`, which answers the buffer when the
file is open and the disk otherwise.

Positions here are (line, character) with characters counted in code points
of the text (the LSP layer converts from the negotiated encoding). Lines end
at "\\n", "\\r\\n" or "\\r", as in LSP.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_lsp.agent.ports import DocumentSnapshot
from agent_lsp.tools.text import line_starts, offset_of

CodePointPosition = tuple[int, int]


def normalise_path(path: Path | str) -> Path:
    """The key a document is stored under (absolute, symlinks resolved)."""
    return Path(path).resolve()


def apply_change(text: str, start: CodePointPosition, end: CodePointPosition, new_text: str) -> str:
    """`text` with the range replaced; a position past a line's end means its end,
    past the last line the end of the text (LSP's lenient rule)."""
    starts = line_starts(text)
    a, b = offset_of(text, starts, start), offset_of(text, starts, end)
    if b < a:
        a, b = b, a
    return text[:a] + new_text + text[b:]


@dataclass
class OpenDocument:
    path: Path
    text: str
    version: int
    language_id: str = ""
    uri: str | None = None  # exactly as the editor named it (edits must use the same)
    # The text after an edit the editor applied but has not reported yet: an
    # editor answers workspace/applyEdit before its didChange (eglot sends it
    # when idle), and what is saved for the next command must be the edited text.
    applied_text: str | None = None


class Documents:
    """The open buffers of one server, keyed by normalised path."""

    def __init__(self) -> None:
        self._open: dict[Path, OpenDocument] = {}

    def open(self, path: Path | str, text: str, version: int, language_id: str = "", uri: str | None = None) -> None:
        key = normalise_path(path)
        self._open[key] = OpenDocument(key, text, version, language_id, uri)

    def change(
        self,
        path: Path | str,
        version: int,
        changes: list[tuple[tuple[CodePointPosition, CodePointPosition] | None, str]],
    ) -> None:
        """Apply content changes in order; a change without a range replaces the text."""
        doc = self._open.get(normalise_path(path))
        if doc is None:
            return  # a change for a document we never saw open: nothing to track
        text = doc.text
        for span, new_text in changes:
            text = new_text if span is None else apply_change(text, span[0], span[1], new_text)
        doc.text = text
        doc.version = version
        doc.applied_text = None  # the editor's own report supersedes what we expected

    def edit_applied(self, path: Path | str, text: str) -> None:
        """The editor applied an edit that makes the buffer `text`; its didChange may follow later."""
        doc = self._open.get(normalise_path(path))
        if doc is not None:
            doc.applied_text = text

    def text_to_save(self, path: Path | str) -> str | None:
        """What the buffer holds now, counting an applied edit not yet reported; None when not open."""
        doc = self._open.get(normalise_path(path))
        if doc is None:
            return None
        return doc.text if doc.applied_text is None else doc.applied_text

    def close(self, path: Path | str) -> None:
        self._open.pop(normalise_path(path), None)

    def get(self, path: Path | str) -> DocumentSnapshot | None:
        """The open buffer's text and version, or None when not open."""
        doc = self._open.get(normalise_path(path))
        return None if doc is None else DocumentSnapshot(doc.path, doc.text, doc.version)

    def uri_of(self, path: Path | str) -> str:
        """The URI the editor uses for this file: its own when the file is open."""
        doc = self._open.get(normalise_path(path))
        if doc is not None and doc.uri:
            return doc.uri
        return normalise_path(path).as_uri()

    def is_open(self, path: Path | str) -> bool:
        return normalise_path(path) in self._open

    def paths(self) -> list[Path]:
        return list(self._open)

    def under(self, root: Path) -> list[Path]:
        """Open documents inside `root`."""
        root = normalise_path(root)
        return [p for p in self._open if p == root or root in p.parents]

    def read(self, path: Path | str) -> DocumentSnapshot:
        """The buffer when open, else the file on disk (version None). Raises OSError."""
        snapshot = self.get(path)
        if snapshot is not None:
            return snapshot
        key = normalise_path(path)
        return DocumentSnapshot(key, key.read_text(encoding="utf-8"), None)
