"""Sessions in their own git worktree: made, found again, listed and deleted.

A worktree session works in a git worktree of its folder's repository, on a
new branch `agent/<key>` from the folder's `HEAD` (or a named base), in
`<data dir>/worktrees/<folder key>/<key>`: outside the repository, so its
edits and commands never touch the main checkout. Its host is a
`WorkspaceHost` rooted at the folder's place in the worktree, made by the face
(`make_host`) and kept here, beside the face's folder hosts.

The session's header records `{"worktree": {...}}` (its `meta`), and a
record `<data dir>/worktrees/<folder key>/<session id>.json` says the same
for the folder: after a restart the folder's listing shows the session and a
request naming it finds its worktree without opening any session.

Deleting the session removes its worktree and branch, and the sessions stored
for the worktree (its forks and sub-agents' sessions). While the worktree
holds work the main checkout lacks, deleting is refused unless forced.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_lsp.workspace import worktrees
from agent_lsp.workspace.session_location import folder_key
from agent_lsp.workspace.worktrees import Changes, WorktreeError

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost
    from agent_lsp.workspace.session_listing import SessionListing

log = logging.getLogger(__name__)

BRANCH_PREFIX = "agent/"
MAX_RECORD_BYTES = 64 * 1024


class WorktreeProblem(ValueError):
    """A worktree request refused, with a reason the user can read (not a
    repository, no such base, work not landed)."""


@dataclass(frozen=True)
class Worktree:
    """Where a worktree session works, and what it started from."""

    session_id: str
    path: Path  # the worktree's top folder
    root: Path  # where the session works: the folder's place in the worktree
    branch: str
    base: str  # the commit it started from
    main_root: Path  # the folder the session belongs to (in the main checkout)
    repository: Path  # the main checkout's top folder

    def to_json(self) -> dict:
        return {"sessionId": self.session_id, "path": str(self.path), "root": str(self.root), "branch": self.branch,
                "base": self.base, "mainRoot": str(self.main_root), "repository": str(self.repository)}

    @classmethod
    def from_json(cls, data: dict) -> Worktree:
        return cls(session_id=str(data["sessionId"]), path=Path(data["path"]), root=Path(data["root"]),
                   branch=str(data["branch"]), base=str(data["base"]), main_root=Path(data["mainRoot"]),
                   repository=Path(data["repository"]))


@dataclass(frozen=True)
class Listed:
    """A session of a worktree as the folder lists it."""

    listing: SessionListing
    worktree: Worktree
    changes: Changes


class WorktreeSessions:
    def __init__(self, place: Path, make_host: Callable[[Path], WorkspaceHost],
                 sessions_dir: Callable[[Path], Path]):
        self.place = place  # <data dir>/worktrees
        self.make_host = make_host
        self.sessions_dir = sessions_dir  # where the sessions of a folder (a worktree's) are stored
        self._hosts: dict[Path, WorkspaceHost] = {}  # by worktree root, built on first use

    # ---------------------------------------------------------------- hosts

    def live_hosts(self) -> list[WorkspaceHost]:
        return list(self._hosts.values())

    def release(self) -> list[WorkspaceHost]:
        """The hosts built so far, forgotten here (the face closes them)."""
        hosts, self._hosts = list(self._hosts.values()), {}
        return hosts

    def host(self, worktree: Worktree) -> WorkspaceHost:
        host = self._hosts.get(worktree.root)
        if host is None:
            host = self._hosts[worktree.root] = self.make_host(worktree.root)
        return host

    def folder_place(self, main_root: Path) -> Path:
        return self.place / folder_key(main_root)

    def records(self, main_root: Path) -> list[Worktree]:
        """The worktree sessions of a folder, as recorded."""
        try:
            files = sorted(self.folder_place(main_root).glob("*.json"))
        except OSError:
            return []
        return [worktree for worktree in map(_read_record, files) if worktree is not None]

    def record_of(self, session_id: str, main_roots: Iterable[Path]) -> Worktree | None:
        if not _plain_name(session_id):
            return None
        for main_root in main_roots:
            worktree = _read_record(self.folder_place(main_root) / f"{session_id}.json")
            if worktree is not None:
                return worktree
        return None

    def find(self, session_id: str, main_roots: Iterable[Path]) -> WorkspaceHost | None:
        """The host of a session that lives in a worktree of one of these folders:
        a worktree's own session, or one stored beside it (a fork, a sub-agent's)."""
        main_roots = list(main_roots)
        worktree = self.record_of(session_id, main_roots)
        if worktree is not None:
            return self.host(worktree)
        if not _plain_name(session_id):
            return None
        for main_root in main_roots:
            for worktree in self.records(main_root):
                host = self._hosts.get(worktree.root)
                if (host is not None and session_id in host.agents) or \
                        (self.sessions_dir(worktree.root) / f"{session_id}.jsonl").exists():
                    return self.host(worktree)
        return None

    # ------------------------------------------------------------- sessions

    async def new_session(self, main_root: Path, *, base: str | None = None, title: str | None = None) -> Agent:
        """A session of `main_root` in a new worktree on a new branch from `base`
        (None: HEAD). WorktreeProblem when the folder is not in a git repository
        or the base names no commit."""
        try:
            repository = await worktrees.repository_of(main_root)
            key = secrets.token_hex(4)
            path = self.folder_place(main_root) / key
            branch = BRANCH_PREFIX + key
            commit = await worktrees.add(repository, path, branch, base)
        except WorktreeError as error:
            raise WorktreeProblem(str(error)) from None
        root = path / main_root.relative_to(repository)
        try:
            host = self.make_host(root)
            self._hosts[root] = host
            draft = Worktree("", path, root, branch, commit, main_root, repository)
            agent = host.new_session(title=title, meta={"worktree": _meta(draft)})
            worktree = Worktree(agent.session_id, path, root, branch, commit, main_root, repository)
            _write_record(self.folder_place(main_root) / f"{agent.session_id}.json", worktree)
        except BaseException:
            await self._discard(root, path, repository, branch)
            raise
        return agent

    async def listed(self, main_root: Path, query: str | None = None) -> list[Listed]:
        """The sessions of the folder's worktrees with each worktree's changes
        against its base (worktrees measured at once)."""
        recorded = self.records(main_root)
        measured = await asyncio.gather(*(_changes(worktree) for worktree in recorded))
        found = []
        for worktree, changes in zip(recorded, measured):
            for listing in await self.host(worktree).list_sessions_off_loop(query):
                found.append(Listed(listing, worktree, changes))
        return found

    async def delete_session(self, host: WorkspaceHost, session_id: str, *, main_roots: Iterable[Path],
                             force: bool = False) -> bool:
        """Delete a session; a worktree's own session takes its worktree, branch
        and stored sessions along. WorktreeProblem while the worktree holds work
        the main checkout lacks, unless `force`."""
        worktree = self.record_of(session_id, main_roots) if host in self._hosts.values() else None
        if worktree is None:
            return await host.delete_session(session_id)
        if not force and await self._unlanded(worktree):
            changes = await _changes(worktree)
            raise WorktreeProblem(
                f"the worktree of {session_id} (branch {worktree.branch}) has changes not landed in the main "
                f"checkout ({_counted(changes)}): delete it with force: true to discard them")
        deleted = await host.delete_session(session_id)  # SessionLockedError: open elsewhere, nothing removed
        sessions_dir = host.sessions_dir
        await self._discard(worktree.root, worktree.path, worktree.repository, worktree.branch)
        shutil.rmtree(sessions_dir, ignore_errors=True)  # the worktree's own store: its forks, sub-agents
        (self.folder_place(worktree.main_root) / f"{session_id}.json").unlink(missing_ok=True)
        return deleted

    async def _unlanded(self, worktree: Worktree) -> bool:
        try:
            return await worktrees.unlanded(worktree.repository, worktree.path, worktree.base)
        except WorktreeError as error:
            raise WorktreeProblem(f"cannot tell whether the worktree {worktree.path} has changes: {error}") from None

    async def _discard(self, root: Path, path: Path, repository: Path, branch: str) -> None:
        host = self._hosts.pop(root, None)
        if host is not None:
            await host.close()
        try:
            await worktrees.remove(repository, path, branch)
        except WorktreeError as error:
            raise WorktreeProblem(f"the worktree {path} was not removed: {error}") from None


def _meta(worktree: Worktree) -> dict:
    """What the session's header records: where it works and what it started from."""
    return {"path": str(worktree.path), "branch": worktree.branch, "base": worktree.base,
            "mainRoot": str(worktree.main_root)}


async def _changes(worktree: Worktree) -> Changes:
    try:
        return await worktrees.changes(worktree.path, worktree.base)
    except WorktreeError as error:  # its folder removed by hand, say
        log.info("changes of the worktree %s not measured: %s", worktree.path, error)
        return Changes()


def _counted(changes: Changes) -> str:
    files = "1 file" if changes.files == 1 else f"{changes.files} files"
    return f"{files}, +{changes.added} -{changes.removed} lines"


def _plain_name(session_id: str) -> bool:
    return bool(session_id) and len(session_id) <= 200 and not any(c in session_id for c in "/\\\0") \
        and not session_id.startswith(".")


def _read_record(file: Path) -> Worktree | None:
    try:
        if file.stat().st_size > MAX_RECORD_BYTES:
            return None
        return Worktree.from_json(json.loads(file.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_record(file: Path, worktree: Worktree) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    partial = file.with_suffix(".json.partial")
    partial.write_text(json.dumps(worktree.to_json()) + "\n", encoding="utf-8")
    os.replace(partial, file)
