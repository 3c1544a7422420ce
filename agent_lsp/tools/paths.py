"""Path confinement: every path a tool touches resolves inside the workspace roots.

Paths come from the model: workspace-relative ("src/a.py"), absolute inside a
root, or file:// URIs. They are resolved with symlinks followed, so `..`,
absolute paths, symlinks pointing out and URIs of other folders are all
refused with a message the model can act on.

(This lives in the tools layer because tools sit below the workspace layer;
`agent_lsp.workspace.paths` re-exports it for the host.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence
from urllib.parse import urlparse

from agent_lsp.visible import name_from_shown, visible_name

# What urllib.request.url2pathname is, without importing urllib.request (and
# with it http.client and email: a tenth of a second at every start).
if os.name == "nt":
    from nturl2path import url2pathname
else:
    from urllib.parse import unquote as url2pathname


class OutsideWorkspaceError(ValueError):
    """A path that resolves outside every workspace root (or is not a path at all)."""


class WorkspaceRoots:
    def __init__(self, roots: Sequence[Path]):
        if not roots:
            raise ValueError("at least one workspace root is needed")
        self.roots: tuple[Path, ...] = tuple(Path(os.path.abspath(r)) for r in roots)
        self._resolved: tuple[Path, ...] = tuple(r.resolve() for r in self.roots)

    @property
    def primary(self) -> Path:
        return self.roots[0]

    def resolve(self, raw: str | Path, *, base: Path | None = None) -> Path:
        """The confined absolute path for `raw`, or OutsideWorkspaceError.

        The result is spelled under the root as given (not its resolved form),
        so it names the same document the editor has open.
        """
        text = str(raw).strip()
        if not text:
            raise OutsideWorkspaceError("empty path")
        if "\0" in text:
            raise OutsideWorkspaceError("path contains a NUL character")
        candidate = self._candidate(text, base)
        named = name_from_shown(text)  # a name `display` showed quoted and escaped, passed back
        if named is not None and "\0" not in named and not os.path.lexists(candidate):
            candidate = self._candidate(named, base)
        lexical = Path(os.path.normpath(candidate))
        real = candidate.resolve()
        for root, real_root in zip(self.roots, self._resolved):
            if real == real_root or real.is_relative_to(real_root):
                return root / real.relative_to(real_root)
        if self._lexically_inside(lexical):
            raise OutsideWorkspaceError(
                f"'{text}' goes through a symbolic link that points outside the workspace "
                f"(to {real}); tools only reach files under {self._roots_text()}"
            )
        raise OutsideWorkspaceError(
            f"'{text}' is outside the workspace; tools only reach files under {self._roots_text()} "
            "(use a path relative to the workspace root)"
        )

    def _candidate(self, text: str, base: Path | None) -> Path:
        candidate = Path(os.path.expanduser(_uri_to_path(text)))
        return candidate if candidate.is_absolute() else (base or self.primary) / candidate

    def contains(self, path: Path) -> bool:
        try:
            self.resolve(path)
        except OutsideWorkspaceError:
            return False
        return True

    def root_of(self, path: Path) -> Path | None:
        for root in self.roots:
            if path == root or path.is_relative_to(root):
                return root
        return None

    def display(self, path: Path) -> str:
        """How a confined path is shown to the model: relative to the first root
        (what `resolve` accepts back), absolute for the other roots; quoted with
        its line breaks and control characters escaped when it has any
        (`visible_name`: a name never forges a line of a result), which `resolve`
        accepts back too."""
        if path == self.primary:
            return "."
        if path.is_relative_to(self.primary):
            return visible_name(path.relative_to(self.primary).as_posix())
        return visible_name(str(path))

    def relative(self, path: Path) -> str:
        """Path relative to the root holding it (for rule globs and .gitignore)."""
        root = self.root_of(path)
        return path.relative_to(root).as_posix() if root else path.as_posix()

    def _lexically_inside(self, path: Path) -> bool:
        return any(path == r or path.is_relative_to(r) for r in self.roots)

    def _roots_text(self) -> str:
        return ", ".join(str(r) for r in self.roots)


def file_uri_to_path(uri: str) -> Path:
    """The local path a file:// URI names; OutsideWorkspaceError (a ValueError) for
    another scheme or another host."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise OutsideWorkspaceError(f"'{uri}' is not a file path (scheme '{parsed.scheme}')")
    if parsed.netloc not in ("", "localhost"):
        raise OutsideWorkspaceError(f"'{uri}' names another host")
    return Path(url2pathname(parsed.path))  # url2pathname also unquotes


def _uri_to_path(text: str) -> str:
    if "://" not in text[:12] and not text.startswith("file:"):
        return text
    return str(file_uri_to_path(text))
