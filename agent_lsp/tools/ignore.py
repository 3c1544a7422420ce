"""Walking the workspace the way the user's git sees it: `.gitignore` respected.

Every `.gitignore` from the workspace root down applies to its folder (the
deeper file wins; within a file the last matching line wins; an ignored
folder is not entered, so nothing under it comes back). `.git` is always
skipped, symbolic links are never followed, hidden files are included. grep
passes the same rules to ripgrep, so both give the same files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator

ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def glob_to_regex(glob: str) -> str:
    """gitignore glob -> regex body ('*' and '?' stop at '/', '**' crosses folders)."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = glob.find("]", i + 2 if glob.startswith(("[!", "[^"), i) else i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = glob[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _parse_line(line: str) -> _Rule | None:
    line = line.rstrip("\n").rstrip("\r")
    # trailing spaces are dropped unless escaped
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = glob_to_regex(line.lstrip("/"))
    prefix = "^" if anchored else "^(?:.*/)?"
    return _Rule(re.compile(prefix + body + "$"), negated, dir_only)


class IgnoreFile:
    """The rules of one .gitignore, for paths relative to its folder."""

    def __init__(self, text: str):
        self.rules = [r for r in map(_parse_line, text.splitlines()) if r is not None]

    def decide(self, relative: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None: no line matches."""
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(relative):
                return not rule.negated
        return None


@lru_cache(maxsize=4096)
def _load(path: str, mtime_ns: int) -> IgnoreFile:
    try:
        return IgnoreFile(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return IgnoreFile("")


def _ignore_file_in(folder: Path) -> IgnoreFile | None:
    path = folder / ".gitignore"
    try:
        st = path.stat()
    except OSError:
        return None
    return _load(str(path), st.st_mtime_ns)


class IgnoreChain:
    """The .gitignore files that apply inside one folder (root first)."""

    def __init__(self, levels: tuple[tuple[Path, IgnoreFile], ...] = ()):
        self.levels = levels

    @classmethod
    def for_folder(cls, root: Path, folder: Path) -> "IgnoreChain":
        chain = cls()
        current = root
        chain = chain.enter(current)
        for part in folder.relative_to(root).parts:
            current = current / part
            chain = chain.enter(current)
        return chain

    def enter(self, folder: Path) -> "IgnoreChain":
        found = _ignore_file_in(folder)
        return IgnoreChain(self.levels + ((folder, found),)) if found else self

    def ignored(self, path: Path, is_dir: bool) -> bool:
        if path.name in ALWAYS_SKIPPED:
            return True
        for folder, rules in reversed(self.levels):
            decision = rules.decide(path.relative_to(folder).as_posix(), is_dir)
            if decision is not None:
                return decision
        return False


def is_ignored(root: Path, path: Path) -> bool:
    """Whether `path` (inside `root`) is hidden by .gitignore or inside an ignored folder."""
    rel_parts = path.relative_to(root).parts
    chain = IgnoreChain().enter(root)
    current = root
    for i, part in enumerate(rel_parts):
        current = current / part
        last = i == len(rel_parts) - 1
        is_dir = not last or current.is_dir()
        if chain.ignored(current, is_dir):
            return True
        if not last:
            chain = chain.enter(current)
    return False


@dataclass(frozen=True)
class Entry:
    path: Path
    is_dir: bool


def list_entries(root: Path, folder: Path) -> tuple[list[Entry], int]:
    """A folder's entries sorted by name, and how many were ignored."""
    chain = IgnoreChain.for_folder(root, folder)
    kept: list[Entry] = []
    ignored = 0
    with os.scandir(folder) as it:
        items = sorted(it, key=lambda e: e.name)
    for item in items:
        is_dir = item.is_dir(follow_symlinks=False)
        path = folder / item.name
        if chain.ignored(path, is_dir):
            ignored += 1
            continue
        kept.append(Entry(path, is_dir or (item.is_symlink() and path.is_dir())))
    return kept, ignored


def walk_files(root: Path, folder: Path) -> Iterator[Path]:
    """Files under `folder` not ignored, depth first in name order (ripgrep's --sort path order).
    Symbolic links are skipped."""
    yield from _walk(folder, IgnoreChain.for_folder(root, folder))


def _walk(folder: Path, chain: IgnoreChain) -> Iterator[Path]:
    try:
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for item in items:
        if item.is_symlink():
            continue
        path = folder / item.name
        is_dir = item.is_dir(follow_symlinks=False)
        if chain.ignored(path, is_dir):
            continue
        if is_dir:
            yield from _walk(path, chain.enter(path))
        elif item.is_file(follow_symlinks=False):
            yield path
