"""list_dir, glob and grep: finding things in the workspace, .gitignore respected.

grep runs ripgrep when `rg` is on PATH and a Python search otherwise; both
produce the same structured matches, rendered by one formatter, so the model
sees the same text either way. Open buffers are searched as the user sees
them (their unsaved text), not as they are on disk.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pydantic import Field

from agent_lsp.agent.ports import ToolContext, ToolOutput
from agent_lsp.tools.base import BuiltinTool, ToolEnv, ToolError, ToolInput
from agent_lsp.tools.ignore import glob_to_regex, is_ignored, list_entries, walk_files
from agent_lsp.tools.text import decode
from agent_lsp.visible import visible_name

MAX_LIST_ENTRIES = 1000
MAX_GLOB_RESULTS = 500
MAX_GREP_LINE_CHARS = 300

# ---------------------------------------------------------------- list_dir


class ListDirInput(ToolInput):
    path: str = "."


class ListDir(BuiltinTool):
    name = "list_dir"
    description = (
        "List a folder's entries (folders end with '/'; .gitignore'd ones left out). Not recursive: "
        "glob finds files at any depth."
    )
    input_model = ListDirInput
    parallel = True

    async def execute(self, args: ListDirInput, ctx: ToolContext) -> ToolOutput:
        folder = self.env.resolve(args.path, default_root=True)
        shown = self.env.show(folder)
        if not folder.exists():
            raise ToolError(f"'{shown}' does not exist", "NOT_FOUND")
        if not folder.is_dir():
            raise ToolError(f"'{shown}' is a file, not a folder; use read_file", "NOT_A_DIRECTORY")
        root = self.env.roots.root_of(folder) or self.env.roots.primary
        entries, ignored = list_entries(root, folder)
        names = [visible_name(e.path.name + ("/" if e.is_dir else "")) for e in entries]
        lines = names[:MAX_LIST_ENTRIES]
        if len(names) > MAX_LIST_ENTRIES:
            lines.append(f"[{len(names) - MAX_LIST_ENTRIES} more entries not shown]")
        if ignored:
            lines.append(f"[{ignored} entries hidden by .gitignore]")
        if not names:
            lines.insert(0, f"{shown} is empty.")
        return ToolOutput(content="\n".join(lines), meta={"path": shown, "count": len(names)})


# -------------------------------------------------------------------- glob


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    out: list[str] = []
    for option in match.group(1).split(","):
        out.extend(_expand_braces(head + option + tail))
    return out


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A glob over '/'-separated relative paths. Without '/', it matches a file
    name at any depth ('*.py'); with '/', the whole relative path ('src/**/*.ts')."""
    bodies = []
    for option in _expand_braces(pattern.strip()):
        option = option.removeprefix("./")
        if "/" in option.rstrip("/"):
            bodies.append(glob_to_regex(option.lstrip("/")))
        else:
            bodies.append("(?:.*/)?" + glob_to_regex(option))
    return re.compile("^(?:" + "|".join(bodies) + ")$")


class GlobInput(ToolInput):
    pattern: str = Field(description="e.g. '**/*.py', 'src/*.ts', '*.{js,ts}'; without '/' it matches names at any depth")
    path: str = Field(default=".", description="folder to search from")


class Glob(BuiltinTool):
    name = "glob"
    description = (
        "Find files by name pattern (.gitignore respected): their paths, sorted."
    )
    input_model = GlobInput
    parallel = True

    async def execute(self, args: GlobInput, ctx: ToolContext) -> ToolOutput:
        folder = _search_folder(self.env, args.path)
        regex = compile_glob(args.pattern)
        root = self.env.roots.root_of(folder) or self.env.roots.primary

        def find() -> list[Path]:
            return [p for p in walk_files(root, folder) if regex.match(p.relative_to(folder).as_posix())]

        found = await asyncio.to_thread(find)
        shown = [self.env.show(p) for p in found]
        if not shown:
            return ToolOutput(content=f"No files match '{args.pattern}' under {self.env.show(folder)}.")
        lines = shown[:MAX_GLOB_RESULTS]
        if len(shown) > MAX_GLOB_RESULTS:
            lines.append(f"[{len(shown) - MAX_GLOB_RESULTS} more files; narrow the pattern or the path]")
        return ToolOutput(content="\n".join(lines), meta={"count": len(shown)})


def _search_folder(env: ToolEnv, raw: str) -> Path:
    folder = env.resolve(raw, default_root=True)
    if not folder.is_dir():
        shown = env.show(folder)
        if not folder.exists():
            raise ToolError(f"'{shown}' does not exist", "NOT_FOUND")
        raise ToolError(f"'{shown}' is a file; give a folder", "NOT_A_DIRECTORY")
    return folder


# -------------------------------------------------------------------- grep


class GrepInput(ToolInput):
    pattern: str = Field(description="regular expression (Python/Rust syntax), matched line by line")
    path: str = Field(default=".", description="folder or file to search")
    glob: str | None = Field(default=None, description="only files matching this glob, e.g. '*.py'")
    context_lines: int = Field(default=0, ge=0, le=20, description="lines shown around each match")
    max_results: int = Field(default=100, ge=1, le=2000, description="most matching lines returned")
    case_sensitive: bool = True


@dataclass
class FileMatches:
    path: Path
    lines: list[tuple[int, str, bool]] = field(default_factory=list)  # (number, text, is_match)

    @property
    def match_count(self) -> int:
        return sum(1 for _, _, m in self.lines if m)


@dataclass(frozen=True)
class GrepQuery:
    regex: re.Pattern[str]
    pattern: str
    context: int
    limit: int
    case_sensitive: bool


def search_text(path: Path, text: str, query: GrepQuery) -> FileMatches | None:
    """Matching lines of one text, with context (the Python search and open buffers)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    flat = text.replace("\r\n", "\n")
    if not query.regex.search(flat):
        return None
    lines = flat.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    hits = [i for i, line in enumerate(lines) if query.regex.search(line)]
    if not hits:
        return None
    wanted: dict[int, bool] = {}
    for i in hits:
        for j in range(max(0, i - query.context), min(len(lines), i + query.context + 1)):
            wanted.setdefault(j, False)
        wanted[i] = True
    result = FileMatches(path)
    result.lines = [(i + 1, lines[i], wanted[i]) for i in sorted(wanted)]
    return result


def python_search(files: list[Path], query: GrepQuery) -> list[FileMatches]:
    found: list[FileMatches] = []
    total = 0
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue
        result = search_text(path, decode(data).text, query)
        if result:
            found.append(result)
            total += result.match_count
            if total > query.limit:  # one more than shown tells there is more
                break
    return found


def ripgrep_command(rg: str, query: GrepQuery, target: Path) -> list[str]:
    command = [
        rg, "--json", "--sort", "path", "--no-config", "--hidden", "--crlf",
        "--no-require-git", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude",
        "--no-ignore-parent", "--glob", "!.git",
    ]  # fmt: skip
    command.append("--case-sensitive" if query.case_sensitive else "--ignore-case")
    if query.context:
        command += ["--context", str(query.context)]
    return command + ["--regexp", query.pattern, "--", str(target)]


class RipgrepFailed(Exception):
    pass


async def ripgrep_search(rg: str, query: GrepQuery, target: Path, keep) -> list[FileMatches]:
    """Run ripgrep, read its JSON stream until `limit` matches are in, then stop it."""
    proc = await asyncio.create_subprocess_exec(
        *ripgrep_command(rg, query, target),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        limit=1 << 24,
    )
    found: list[FileMatches] = []
    current: FileMatches | None = None
    total = 0
    finished = False  # rg ends a completed search with a "summary" message
    stopped = False
    try:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            event = json.loads(raw)
            kind, data = event["type"], event["data"]
            if kind == "begin":
                path = Path(_rg_text(data["path"]))
                current = FileMatches(path) if keep(path) else None
            elif kind in ("match", "context") and current is not None:
                text = _rg_text(data["lines"]).rstrip("\n").removesuffix("\r")
                current.lines.append((data["line_number"], text, kind == "match"))
            elif kind == "end" and current is not None:
                if current.lines and current.match_count:
                    found.append(current)
                    total += current.match_count
                current = None
                if total > query.limit:  # one more than shown tells there is more
                    stopped = True
                    break
            elif kind == "summary":
                finished = True
    finally:
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        stderr = await proc.stderr.read() if proc.stderr else b""
        await proc.wait()
    if not finished and not stopped:
        raise RipgrepFailed(stderr.decode(errors="replace").strip())
    return found


def _rg_text(value: dict) -> str:
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")


def format_matches(
    env: ToolEnv, results: list[FileMatches], limit: int, context: int
) -> tuple[str, int, int, bool]:
    """rg-style text: a heading per file, 'N:line' for matches, 'N-line' for context,
    '--' between separate groups (with context). Cut after `limit` matching lines."""
    blocks: list[str] = []
    total = 0
    truncated = False
    for result in results:
        if total >= limit:
            truncated = True
            break
        kept: list[tuple[int, str, bool]] = []
        for row in result.lines:
            if row[2]:
                if total >= limit:
                    truncated = True
                    break
                total += 1
            kept.append(row)
        if truncated:
            while kept and not kept[-1][2]:
                kept.pop()
        rows = [env.show(result.path)]
        previous = None
        for number, text, is_match in kept:
            if context and previous is not None and number > previous + 1:
                rows.append("--")
            if len(text) > MAX_GREP_LINE_CHARS:
                text = text[:MAX_GREP_LINE_CHARS] + " …"
            rows.append(f"{number}{':' if is_match else '-'}{text}")
            previous = number
        blocks.append("\n".join(rows))
        if truncated:
            break
    return "\n\n".join(blocks), total, len(blocks), truncated


def sort_key(path: Path) -> tuple[str, ...]:
    return path.parts


class Grep(BuiltinTool):
    name = "grep"
    description = (
        "Search file contents (.gitignore respected). Results are grouped by file: 'N:text' is a "
        "matching line, 'N-text' context."
    )
    input_model = GrepInput
    parallel = True

    def __init__(self, env: ToolEnv, ripgrep: str | None | bool = True):
        super().__init__(env)
        # True: find rg on PATH; None/False: Python only; a str: that executable
        self.ripgrep = shutil.which("rg") if ripgrep is True else (ripgrep or None)

    async def execute(self, args: GrepInput, ctx: ToolContext) -> ToolOutput:
        flags = 0 if args.case_sensitive else re.IGNORECASE
        try:
            regex = re.compile(args.pattern, flags | re.MULTILINE)
        except re.error as e:
            raise ToolError(f"invalid regular expression '{args.pattern}': {e}", "BAD_PATTERN") from None
        query = GrepQuery(regex, args.pattern, args.context_lines, args.max_results, args.case_sensitive)
        target = self.env.resolve(args.path, default_root=True)
        if not target.exists():
            raise ToolError(f"'{self.env.show(target)}' does not exist", "NOT_FOUND")
        root = self.env.roots.root_of(target) or self.env.roots.primary
        folder = target if target.is_dir() else target.parent
        name_filter = compile_glob(args.glob) if args.glob else None

        def wanted(path: Path) -> bool:
            if name_filter is None or not target.is_dir():
                return True
            return bool(name_filter.match(path.relative_to(folder).as_posix()))

        open_paths = {p for p in self.env.editor.open_documents() if _in_scope(p, target, root)}
        open_paths = {p for p in open_paths if wanted(p)}

        def keep_disk(path: Path) -> bool:
            return path not in open_paths and wanted(path)

        results = await self._search_disk(query, target, root, keep_disk)
        for path in open_paths:
            snapshot = self.env.editor.document(path)
            if snapshot is not None:
                found = search_text(path, snapshot.text, query)
                if found:
                    results.append(found)
        results.sort(key=lambda r: sort_key(r.path))

        text, total, files, truncated = format_matches(self.env, results, args.max_results, args.context_lines)
        if total == 0:
            return ToolOutput(content=f"No matches for '{args.pattern}'.", meta={"matches": 0})
        if truncated:
            text += f"\n\n[showing the first {total} matching lines; narrow path/glob or raise maxResults]"
        return ToolOutput(content=text, meta={"matches": total, "files": files, "truncated": truncated})

    async def _search_disk(self, query: GrepQuery, target: Path, root: Path, keep) -> list[FileMatches]:
        if self.ripgrep:
            # rg is not told about the .gitignore files above `target` (they may lie outside
            # the workspace); the ones inside it are checked here
            above = target.is_dir() and target != root

            def rg_keep(path: Path) -> bool:
                return keep(path) and not (above and is_ignored(root, path))

            try:
                return await ripgrep_search(self.ripgrep, query, target, rg_keep)
            except (RipgrepFailed, OSError, ValueError):
                # a pattern rg cannot compile (look-around), a line longer than the read
                # buffer: the Python search handles it
                pass

        def scan() -> list[FileMatches]:
            files = [target] if target.is_file() else walk_files(root, target)
            return python_search([p for p in files if keep(p)], query)

        return await asyncio.to_thread(scan)


def _in_scope(path: Path, target: Path, root: Path) -> bool:
    if path == target:
        return True
    if not path.is_relative_to(target):
        return False
    return not is_ignored(root, path)
