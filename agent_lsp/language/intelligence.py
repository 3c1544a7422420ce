"""The language port over the workspace's own language servers.

Problems an edit added: before the edit, the changed files are synced to their
servers and the servers' publish for that text is awaited (bounded), then the
end of the check it started (no work-done progress under way, nothing
published for a short quiet time: servers re-check the other files after the
changed one, and a file not checked yet is first reported with no problems).
A server still checking when that wait ends has what it publishes until the
new text is sent added to the text before; after it, the publish for *that* version is awaited, then the end of
the check again. Only what the servers said about these exact versions is
compared, so diagnostics of the old text are never reported as new or as gone;
where a check had not ended within the bound, the result says so instead. A
problem is the same before and after when its severity, source, code, message
and the text of its line agree (lines move when an edit adds or removes some
above it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from lsprotocol import types as lsp

from agent_lsp.language import convert
from agent_lsp.language.client import ServerClient, ServerFailed
from agent_lsp.language.pool import ServerPool
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

log = logging.getLogger(__name__)

QUIET_S = 0.15  # after the edited file's publish: how long other files may still be re-published
REQUEST_TIMEOUT_S = 10.0
FOLDER_WAIT_S = 5.0  # a folder's diagnostics: how long a server's first check of the workspace may take
FOLDER_SCAN_LIMIT = 2000  # files looked at to find a folder's languages


@dataclass
class Baseline:
    started: float
    texts: dict[Path, str | None]  # the changed files' text before the edit
    known: dict[str, dict[str, list[lsp.Diagnostic]]] = field(default_factory=dict)  # server -> uri -> published
    fresh: set[tuple[str, str]] = field(default_factory=set)  # (server, uri) published for the text before
    servers: dict[str, ServerClient] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unsettled: set[str] = field(default_factory=set)  # servers still checking when `known` was taken
    taken: dict[str, float] = field(default_factory=dict)  # server -> when its `known` was taken


class WorkspaceLanguage:
    def __init__(self, pool: ServerPool, read: Callable[[Path], str | None], wait_s: float = 1.5,
                 open_paths: Callable[[], list[Path]] = list):
        self.pool = pool
        self.read = read  # the text the agent sees: the editor's buffer, else disk; None if unreadable
        self.open_paths = open_paths  # the editor's open buffers: their unsaved text is what is checked
        self.convert = convert.Converter(read)  # our servers are asked for UTF-16
        self.wait_s = wait_s
        self._background: set[asyncio.Task] = set()

    def serves(self, path: Path) -> bool:
        return bool(self.pool.specs_for(path))

    def touch(self, path: Path) -> None:
        if not self.serves(path):
            return
        task = asyncio.ensure_future(self._open(path))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _open(self, path: Path) -> list[ServerClient]:
        clients, _ = await self.pool.clients_for(path)
        text = self.read(path)
        if text is not None:
            for client in clients:
                client.sync(path, text)
        return clients

    # ---------------------------------------------------- problems of an edit

    async def before_change(self, paths: list[Path], texts: dict[Path, str | None] | None = None) -> Baseline:
        baseline = Baseline(time.monotonic(), {})
        deadline = baseline.started + self.wait_s
        served = [p for p in paths if self.serves(p)]
        if not served:
            return baseline
        for path in served:
            baseline.texts[path] = texts[path] if texts is not None and path in texts else self.read(path)
        try:
            opened = await asyncio.wait_for(asyncio.gather(*(self._clients(p, baseline) for p in served)),
                                            max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            baseline.problems.append("the language servers were still starting")
            return baseline
        for client in baseline.servers.values():
            self._sync_buffers(client)
        for path, clients in zip(served, opened):
            text = baseline.texts[path]
            for client in clients:
                if text is not None:
                    client.sync(path, text)
                uri = path.as_uri()
                if await client.wait_for(lambda c=client, u=uri: c.has_published(u), deadline):
                    baseline.fresh.add((client.spec.name, uri))
        for name, client in baseline.servers.items():
            if not await client.wait_quiet(QUIET_S, deadline):  # the other files of the same check
                baseline.unsettled.add(name)
            baseline.known[name] = {uri: list(p.diagnostics) for uri, p in client.published.items()}
            baseline.taken[name] = time.monotonic()
        return baseline

    def _sync_buffers(self, client: ServerClient) -> None:
        """The editor's open buffers this server reads, with their unsaved text."""
        for path in self.open_paths():
            if client.spec.serves(path) and (path == client.root or client.root in path.parents):
                text = self.read(path)
                if text is not None:
                    client.sync(path, text)

    async def _clients(self, path: Path, baseline: Baseline) -> list[ServerClient]:
        clients, problems = await self.pool.clients_for(path)
        baseline.problems.extend(problems)
        for client in clients:
            baseline.servers[client.spec.name] = client
        return clients

    async def after_change(self, token: Baseline, changed: dict[Path, str | None]) -> ProblemReport | None:
        if not token.servers:
            if token.problems:
                return ProblemReport(unknown="; ".join(dict.fromkeys(token.problems)))
            return None
        started = time.monotonic()
        deadline = started + self.wait_s
        changed_uris = {path.as_uri(): path for path in changed}
        uncertain = self._settle_before(token, changed_uris)
        sent = time.monotonic()  # from here on, what the servers publish may be of the new text
        for name in token.unsettled:
            token.taken[name] = sent
        waits = []
        for client in token.servers.values():
            for path, text in changed.items():
                if not client.spec.serves(path):
                    continue
                if text is None:
                    client.did_delete(path)
                else:
                    client.sync(path, text)
                    waits.append((client, path.as_uri()))
        late = []
        for client, uri in waits:
            if not await client.wait_for(lambda c=client, u=uri: c.has_published(u), deadline):
                late.append(client.failure or f"{client.spec.name} did not report on the change within "
                            f"{self.wait_s:g} s (the language.waitSeconds setting)")
        checking = []
        for name, client in token.servers.items():
            if not any(c is client for c, _ in waits):  # only files went away: wait for the re-check they cause
                await client.wait_for(lambda c=client: c.active_since(sent), deadline)
            if not await client.wait_quiet(QUIET_S, deadline) and client.failure is None:
                checking.append(name)
        report = ProblemReport(servers=sorted(token.servers), waited_ms=round((time.monotonic() - started) * 1000))
        if late:
            report.unknown = "; ".join(dict.fromkeys(late))
            report.pending = True
            return report
        for name, client in token.servers.items():
            self._compare(report, token, name, client, changed_uris, changed, token.taken.get(name, sent),
                          name in uncertain)
        if checking:
            report.incomplete = (f"{' and '.join(checking)} had not finished checking the workspace within "
                                 f"{self.wait_s:g} s (the language.waitSeconds setting): problems this change "
                                 "causes in other files may be missing; the language tool's diagnostics shows them later")
        report.added.sort(key=lambda p: (p.path != next(iter(changed), None), str(p.path), p.line))
        return report

    def _settle_before(self, token: Baseline, changed_uris: dict[str, Path]) -> set[str]:
        """Right before the new text is sent, for the servers still checking the
        text before when the baseline was taken: what they published since (the
        rest of that check) joins it. Those still checking now: their other
        files' problems before the edit are not known. (A server that had ended
        its check is not asked again: what it published since may be the edit's
        doing, seen on disk.)"""
        uncertain = set()
        for name, client in token.servers.items():
            if name not in token.unsettled:
                continue
            if not client.settled(QUIET_S):
                uncertain.add(name)
            known = token.known.setdefault(name, {})
            for uri, published in client.published.items():
                if uri not in changed_uris:
                    known[uri] = list(published.diagnostics)
                elif client.has_published(uri):  # a later report of the changed file's text before
                    known[uri] = list(published.diagnostics)
                    token.fresh.add((name, uri))
        return uncertain

    def _compare(self, report: ProblemReport, token: Baseline, name: str, client: ServerClient,
                 changed_uris: dict[str, Path], changed: dict[Path, str | None], since: float,
                 uncertain: bool) -> None:
        """`since`: when the server's problems before were taken; a later report of
        another file is of the text after."""
        before_all = token.known.get(name, {})
        for uri, published in client.published.items():
            path = changed_uris.get(uri) or convert.path_of(uri)
            if path is None:
                continue
            if uri in changed_uris:
                new_text = changed[path]
                if new_text is None:
                    continue
                old_text = token.texts.get(path)
                moved_from = _moved_from(token, name, changed, new_text)
                if (name, uri) in token.fresh and old_text is not None:
                    before = self.convert.problems(path, old_text, before_all.get(uri, []))
                elif moved_from is not None:  # a renamed file: its problems at the old path were there before
                    before = [replace(p, path=path) for p in
                              self.convert.problems(moved_from, new_text, before_all.get(moved_from.as_uri(), []))]
                else:
                    report.baseline_missing = True
                    before = []
            else:
                if published.at < since or uri not in before_all:
                    continue  # not re-checked since the edit, or never seen before: nothing new to say
                new_text = self.read(path)
                if new_text is None:
                    continue
                before = self.convert.problems(path, new_text, before_all[uri])
            after = self.convert.problems(path, new_text, published.diagnostics)
            added, fixed, kept = difference(before, after)
            if added and uncertain and uri not in changed_uris:
                report.baseline_missing = True  # the server was still checking this file's text before
            report.added.extend(added)
            if uri in changed_uris:
                report.fixed += fixed
                report.existing += kept

    # --------------------------------------------------------------- queries

    async def _ready(self, path: Path) -> ServerClient:
        """A running server for `path`, with the file's current text open in it."""
        if not self.serves(path):
            raise NoLanguageServer(no_server_message(self.pool, path))
        clients, problems = await self.pool.clients_for(path)
        if not clients:
            raise NoLanguageServer("; ".join(problems) or no_server_message(self.pool, path))
        text = self.read(path)
        if text is None:
            raise NoLanguageServer(f"cannot read {path.name}")
        deadline = time.monotonic() + self.wait_s
        for client in clients:
            client.sync(path, text)
        # A server asked right after it opened a file may answer before it has read the project:
        # wait (bounded) until it has checked this text.
        first = clients[0]
        await first.wait_for(lambda: first.has_published(path.as_uri()), deadline)
        return first

    async def diagnostics(self, paths: list[Path], min_severity: Severity) -> dict[Path, list[Problem]]:
        """Files: their problems now (synced and awaited). Folders: what the servers
        published for the files under them (servers check whole workspaces;
        started here for the languages found in the folder)."""
        deadline = time.monotonic() + self.wait_s
        found: dict[Path, list[Problem]] = {}
        folders = [p for p in paths if p.is_dir()]
        if folders:
            await self._start_for(folders, deadline + FOLDER_WAIT_S)
            for path, problems in self.known_diagnostics(min_severity).items():
                if any(path == f or f in path.parents for f in folders):
                    found[path] = problems
        for path in paths:
            if path.is_dir():
                continue
            if not self.serves(path):
                continue
            clients, _ = await self.pool.clients_for(path)
            text = self.read(path)
            if text is None:
                continue
            problems: list[Problem] = []
            for client in clients:
                client.sync(path, text)
                await client.wait_for(lambda c=client, u=path.as_uri(): c.has_published(u), deadline)
                published = client.published.get(path.as_uri())
                if published is not None:
                    problems += self.convert.problems(path, text, published.diagnostics)
            rank = SEVERITY_RANK[min_severity]
            found[path] = [p for p in problems if SEVERITY_RANK[p.severity] <= rank]
        return found

    async def _start_for(self, folders: list[Path], deadline: float) -> None:
        """Start the servers for the languages of the files in `folders` and wait for
        their first reports to settle (bounded)."""
        samples: dict[str, Path] = {}
        for folder in folders:
            for count, path in enumerate(folder.rglob("*")):
                if count >= FOLDER_SCAN_LIMIT:
                    break
                if any(part.startswith(".") or part in ("node_modules", "__pycache__") for part in path.parts[len(folder.parts):]):
                    continue
                for choice in self.pool.specs_for(path):
                    samples.setdefault(choice.spec.name, path)
        clients = []
        for path in samples.values():
            clients += (await self.pool.clients_for(path))[0]
        for client in clients:
            await client.wait_for(lambda c=client: bool(c.published), deadline)
            await client.wait_quiet(QUIET_S * 2, deadline)

    def known_diagnostics(self, min_severity: Severity) -> dict[Path, list[Problem]]:
        """What the running servers published for files not asked about (a workspace-wide view)."""
        rank = SEVERITY_RANK[min_severity]
        found: dict[Path, list[Problem]] = {}
        for client in self.pool.running():
            for uri, published in client.published.items():
                path = convert.path_of(uri)
                text = self.read(path) if path is not None else None
                if path is None or text is None:
                    continue
                problems = [p for p in self.convert.problems(path, text, published.diagnostics)
                            if SEVERITY_RANK[p.severity] <= rank]
                if problems:
                    found.setdefault(path, []).extend(problems)
        return found

    async def definition(self, path: Path, position: tuple[int, int]) -> list[Location]:
        client = await self._ready(path)
        result = await client.request(client.lsp.text_document_definition_async(
            lsp.DefinitionParams(text_document=_doc(path), position=self._position(path, position))), REQUEST_TIMEOUT_S, "definition")
        return self._locations(result)

    async def references(self, path: Path, position: tuple[int, int]) -> list[Location]:
        client = await self._ready(path)
        result = await client.request(client.lsp.text_document_references_async(
            lsp.ReferenceParams(text_document=_doc(path), position=self._position(path, position),
                              context=lsp.ReferenceContext(include_declaration=True))),
            REQUEST_TIMEOUT_S, "references")
        return self._locations(result)

    async def hover(self, path: Path, position: tuple[int, int]) -> str | None:
        client = await self._ready(path)
        result = await client.request(client.lsp.text_document_hover_async(
            lsp.HoverParams(text_document=_doc(path), position=self._position(path, position))), REQUEST_TIMEOUT_S, "hover")
        return convert.hover_text(result)

    async def document_symbols(self, path: Path) -> list[Symbol]:
        client = await self._ready(path)
        result = await client.request(client.lsp.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=_doc(path))), REQUEST_TIMEOUT_S, "document symbols")
        return self.convert.symbols(result, path)

    async def workspace_symbols(self, query: str) -> list[Symbol]:
        symbols: list[Symbol] = []
        for client in self.pool.running():
            if not client.workspace_symbols:
                continue
            try:
                result = await client.request(client.lsp.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query)),
                                              REQUEST_TIMEOUT_S, "workspace symbols")
            except ServerFailed as error:
                log.info("%s", error)
                continue
            symbols += self.convert.symbols(result, None)
        return symbols

    async def rename(self, path: Path, position: tuple[int, int], new_name: str) -> list[FileEdits]:
        client = await self._ready(path)
        result = await client.request(client.lsp.text_document_rename_async(
            lsp.RenameParams(text_document=_doc(path), position=self._position(path, position),
                             new_name=new_name)), REQUEST_TIMEOUT_S, "rename")
        return self.convert.workspace_edit(result)

    async def code_actions(self, path: Path, line: int) -> list[CodeAction]:
        client = await self._ready(path)
        text = self.read(path) or ""
        published = client.published.get(path.as_uri())
        on_line = [d for d in (published.diagnostics if published else []) if d.range.start.line <= line <= d.range.end.line]
        end = self.convert.line_end(text, line)
        params = lsp.CodeActionParams(text_document=_doc(path), range=lsp.Range(start=lsp.Position(line=line, character=0), end=end),
                                      context=lsp.CodeActionContext(diagnostics=on_line))
        result = await client.request(client.lsp.text_document_code_action_async(params), REQUEST_TIMEOUT_S,
                                      "code actions")
        return self.convert.code_actions(result)

    def _position(self, path: Path, position: tuple[int, int]) -> lsp.Position:
        return self.convert.to_server(self.read(path) or "", position)

    def _locations(self, result: object) -> list[Location]:
        return self.convert.locations(result)

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self.pool.close()


def no_server_message(pool: ServerPool, path: Path) -> str:
    suffix = path.suffix or path.name
    missing = [c.why for c in pool.choices if c.spec.serves(path) and c.executable is None]
    detail = f" ({'; '.join(missing)})" if missing else ""
    return f"no language server for {suffix} files here{detail}; use grep and read_file instead"


def _doc(path: Path) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=path.as_uri())


def _moved_from(token: Baseline, server: str, changed: dict[Path, str | None], text: str) -> Path | None:
    """The file this text was moved from: one the change removed, whose text it was."""
    return next((p for p, after in changed.items() if after is None and token.texts.get(p) == text
                 and (server, p.as_uri()) in token.fresh), None)
