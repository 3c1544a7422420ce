"""The language port answered by the editor's own language servers (`agent/languageQuery`).

A client that declares `experimental.agentLsp.languageQuery` relays the
question to the language servers it runs for the document (never to
agent_lsp itself), on its live buffers, and answers in LSP's own shapes and
the negotiated position encoding (docs/protocol.md#language-queries). It
answers `null` when it has no server for the document: the agent then uses
the workspace's own servers (`agent_lsp.tools.language_choice`).

Problems an edit added: the editor's diagnostics of every file are asked for
before the edit, with the document at its version then, and after it, at the
version the edit made; the client waits (bounded) until its servers have
reported on that version, or says `pending`. A client that lists the other
documents it checked in full (`checked`: VS Code checks the importers of the
edited file with its TypeScript server) lets a file checked only after the
edit be told apart from a clean one: its problems are not called new.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from lsprotocol import converters
from lsprotocol import types as lsp

from agent_lsp.agent.ports import Editor
from agent_lsp.config import LanguageSettings
from agent_lsp.language.convert import Converter, path_of
from agent_lsp.lsp.editor import as_json
from agent_lsp.tools.language_port import (
    SEVERITY_RANK,
    CodeAction,
    FileEdits,
    Location,
    NoLanguageServer,
    Problem,
    ProblemReport,
    Severity,
    Symbol,
)
from agent_lsp.tools.problems import difference

METHOD = "agent/languageQuery"
VERSION_POLL_S = 0.01
_structure = converters.get_converter().structure


@dataclass
class EditorBaseline:
    texts: dict[Path, str | None]
    files: dict[Path, list[lsp.Diagnostic]] = field(default_factory=dict)
    servers: list[str] = field(default_factory=list)
    checked: set[Path] | None = None  # the other documents checked in full (None: the client does not say)


class EditorLanguage:
    def __init__(self, ask: Callable[[dict[str, Any]], Awaitable[Any]], editor: Editor, encoding: str,
                 read: Callable[[Path], str | None], wait_s: float = 1.5):
        self.ask = ask  # sends agent/languageQuery, returns the client's answer
        self.editor = editor
        self.read = read
        self.wait_s = wait_s
        self.convert = Converter(read, encoding)

    def serves(self, path: Path) -> bool:
        return True  # the editor knows; it answers null where it has no server

    def touch(self, path: Path) -> None:
        pass  # the editor's servers already run

    async def _query(self, kind: str, path: Path | None = None, version: int | None = None,
                     **fields: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"kind": kind, "timeoutMs": round(self.wait_s * 1000), **fields}
        if path is not None:
            snapshot = self.editor.document(path)
            params["textDocument"] = {"uri": path.as_uri(),
                                      "version": version if version is not None else snapshot.version if snapshot else None}
        try:
            answer = await asyncio.wait_for(self.ask(params), self.wait_s + 2)
        except asyncio.TimeoutError:
            raise NoLanguageServer("the editor did not answer the language query in time") from None
        except Exception as error:  # the client answered with an error
            raise NoLanguageServer(f"the editor could not answer: {error}") from None
        answer = as_json(answer)
        if not isinstance(answer, dict) or not answer.get("servers"):
            where = f" for {path.suffix or path.name} files" if path is not None else ""
            raise NoLanguageServer(f"the editor has no language server{where}")
        return answer

    # ---------------------------------------------------- problems of an edit

    async def before_change(self, paths: list[Path], texts: dict[Path, str | None] | None = None) -> EditorBaseline:
        # `texts` cannot be honoured: the editor's servers report on its buffers as they are now
        baseline = EditorBaseline({path: self.read(path) for path in paths})
        answer = await self._query("diagnostics", paths[0] if paths else None, everywhere=True)
        baseline.files = _files(answer)
        baseline.servers = list(answer.get("servers") or [])
        baseline.checked = _checked(answer)
        return baseline

    async def after_change(self, token: EditorBaseline, changed: dict[Path, str | None]) -> ProblemReport | None:
        started = time.monotonic()
        target = next((p for p, text in changed.items() if text is not None), None)
        version = await self._version_with(target, changed[target]) if target is not None else None
        try:
            answer = await self._query("diagnostics", target, version, everywhere=True)
        except NoLanguageServer as error:  # no answer in time, or none for the new text: as good as pending
            return ProblemReport(servers=token.servers, unknown=str(error), pending=True)
        report = ProblemReport(servers=list(answer.get("servers") or token.servers),
                               waited_ms=round((time.monotonic() - started) * 1000))
        if answer.get("pending"):
            report.pending = True
            report.unknown = (f"the editor's language servers did not report on the change within {self.wait_s:g} s "
                              "(some report only when the problems change); the language tool's diagnostics "
                              "operation shows what they say now")
            return report
        after = _files(answer)
        checked_after = _checked(answer) or set()
        for path in set(after) | set(token.files):
            if (path not in changed and path not in token.files and token.checked is not None
                    and path in checked_after and path not in token.checked):
                report.baseline_missing = True  # checked after the edit only: its problems before are not known
            if path in changed:
                old, new = token.texts.get(path), changed[path]
                if new is None:
                    continue
                before = self.convert.problems(path, old, token.files.get(path, [])) if old is not None else []
            else:
                new = self.read(path)
                if new is None:
                    continue
                before = self.convert.problems(path, new, token.files.get(path, []))
            added, fixed, kept = difference(before, self.convert.problems(path, new, after.get(path, [])))
            report.added += added
            if path in changed:
                report.fixed += fixed
                report.existing += kept
        report.added.sort(key=lambda p: (p.path != target, str(p.path), p.line))
        return report

    async def _version_with(self, path: Path, text: str | None) -> int | None:
        """The editor's version of `path` once its buffer holds `text` (its didChange
        may come just after the edit's answer); None if it is not open there."""
        deadline = time.monotonic() + self.wait_s
        while True:
            snapshot = self.editor.document(path)
            if snapshot is None:
                return None
            if snapshot.text == text or time.monotonic() > deadline:
                return snapshot.version
            await asyncio.sleep(VERSION_POLL_S)

    # --------------------------------------------------------------- queries

    async def diagnostics(self, paths: list[Path], min_severity: Severity) -> dict[Path, list[Problem]]:
        files = paths if paths and not paths[0].is_dir() else []
        answer = await self._query("diagnostics", files[0] if files else None, everywhere=not files)
        rank = SEVERITY_RANK[min_severity]
        found: dict[Path, list[Problem]] = {}
        for path, diagnostics in _files(answer).items():
            if paths and not any(path == p or p in path.parents for p in paths):
                continue
            text = self.read(path)
            if text is not None:
                problems = [p for p in self.convert.problems(path, text, diagnostics) if SEVERITY_RANK[p.severity] <= rank]
                if problems:
                    found[path] = problems
        return found

    def _position(self, path: Path, position: tuple[int, int]) -> dict[str, int]:
        point = self.convert.to_server(self.read(path) or "", position)
        return {"line": point.line, "character": point.character}

    async def definition(self, path: Path, position: tuple[int, int]) -> list[Location]:
        answer = await self._query("definition", path, position=self._position(path, position))
        return self.convert.locations(_locations(answer.get("locations")))

    async def references(self, path: Path, position: tuple[int, int]) -> list[Location]:
        answer = await self._query("references", path, position=self._position(path, position))
        return self.convert.locations(_locations(answer.get("locations")))

    async def hover(self, path: Path, position: tuple[int, int]) -> str | None:
        answer = await self._query("hover", path, position=self._position(path, position))
        return answer.get("hover") or None

    async def document_symbols(self, path: Path) -> list[Symbol]:
        answer = await self._query("documentSymbols", path)
        return self.convert.symbols(_symbols(answer.get("symbols")), path)

    async def workspace_symbols(self, query: str) -> list[Symbol]:
        try:
            answer = await self._query("workspaceSymbols", query=query)
        except NoLanguageServer:
            return []
        return self.convert.symbols(_symbols(answer.get("symbols")), None)

    async def rename(self, path: Path, position: tuple[int, int], new_name: str) -> list[FileEdits]:
        answer = await self._query("rename", path, position=self._position(path, position), newName=new_name)
        edit = answer.get("edit")
        return self.convert.workspace_edit(_structure(edit, lsp.WorkspaceEdit) if edit else None)

    async def code_actions(self, path: Path, line: int) -> list[CodeAction]:
        text = self.read(path) or ""
        end = self.convert.line_end(text, line)
        answer = await self._query("codeActions", path, range={
            "start": {"line": line, "character": 0}, "end": {"line": end.line, "character": end.character}})
        actions = [_structure(a, lsp.CodeAction) for a in answer.get("actions") or ()
                   if isinstance(a, dict) and not isinstance(a.get("command"), str)]
        return self.convert.code_actions(actions)


def _files(answer: dict[str, Any]) -> dict[Path, list[lsp.Diagnostic]]:
    files: dict[Path, list[lsp.Diagnostic]] = {}
    for item in answer.get("files") or ():
        path = path_of(item["uri"]) if isinstance(item, dict) and isinstance(item.get("uri"), str) else None
        if path is None:
            continue
        files[path] = [_structure(d, lsp.Diagnostic) for d in item.get("diagnostics") or ()]
    return files


def _checked(answer: dict[str, Any]) -> set[Path] | None:
    listed = answer.get("checked")
    if not isinstance(listed, list):
        return None
    return {p for p in (path_of(u) for u in listed if isinstance(u, str)) if p is not None}


def _locations(items: Any) -> list[Any]:
    return [_structure(i, lsp.LocationLink if "targetUri" in i else lsp.Location)
            for i in items or () if isinstance(i, dict)]


def _symbols(items: Any) -> list[Any]:
    return [_structure(i, lsp.DocumentSymbol if "selectionRange" in i else lsp.SymbolInformation)
            for i in items or () if isinstance(i, dict)]


def relay_factory(protocol: Any, editor: Any) -> Callable[[LanguageSettings], EditorLanguage | None]:
    """For a host: the relay over this connection, with the folder's settings; None
    for a client that did not declare `languageQuery`."""
    from agent_lsp.language import document_reader

    async def ask(params: dict[str, Any]) -> Any:
        return await protocol.send_request_async(METHOD, params)

    def make(settings: LanguageSettings) -> EditorLanguage | None:
        if not editor.agent_caps.language_query:
            return None
        return EditorLanguage(ask, editor, editor.position_encoding, document_reader(editor), settings.wait_seconds)

    return make
