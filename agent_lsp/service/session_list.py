"""A folder's sessions as both faces list them: one shape, built once.

`SessionInfo` is a listed session as the wire carries it (camelCase keys; the
LSP face answers `agent/session/list` with it, `lsp/wire_sessions.py`
re-exports it) and what the ACP face turns into its own `session/list`
entries. `list_sessions` builds them from the workspace hosts' listings (and,
given the worktree sessions, those of each folder's worktrees, listed under
the folder with their branch and changes), filters them by update time and
orders them, the most recently updated first.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from agent_lsp.agent import event_shapes
from agent_lsp.service.requests import Shape

if TYPE_CHECKING:
    from agent_lsp.service.worktree_sessions import Listed, WorktreeSessions
    from agent_lsp.workspace.host import WorkspaceHost


class WorktreeInfo(Shape):
    """Where a worktree session works, and what it changed against its base."""

    branch: str
    path: str = Field(description="the worktree's folder")
    base: str = Field(description="the commit the branch started from")
    files_changed: int = Field(description="files changed in the worktree against the base (untracked ones included)")
    lines_added: int
    lines_removed: int


class SessionInfo(Shape):
    session_id: str
    workspace_uri: str
    title: str | None = None
    created_at: int = Field(description="epoch milliseconds")
    updated_at: int = Field(description="epoch milliseconds")
    turns: int
    status: Literal["idle", "running"]
    parent_session_id: str | None = Field(
        default=None, description="a fork: the session it was forked from; a sub-agent's child session: the session that ran it")
    fork_turn: int | None = Field(default=None, description="a fork: the parent's last turn it shares")
    usage: event_shapes.UsageTotal | None = Field(default=None, description="tokens and estimated cost up to the last turn's end")
    parent_tool_call_id: str | None = Field(
        default=None, description="a sub-agent's child session: the parent's `subagent` tool call that ran it")
    excerpt: str | None = Field(
        default=None, description="listed for a `query`: the message text around a word of it (absent when only "
        "the title has the words)")
    problem: str | None = Field(
        default=None, description="set when the session's file is damaged: what is wrong, naming the file and the line; "
        "loading it shows the events before the damage, read-only")
    worktree: WorktreeInfo | None = Field(
        default=None, description="a session in its own git worktree (`agent/session/new` with `worktree`): its "
        "branch, folder and changes against the base")


async def list_sessions(hosts: list[WorkspaceHost], *, query: str | None = None, updated_after: int | None = None,
                        updated_before: int | None = None, limit: int | None = None,
                        worktrees: WorktreeSessions | None = None) -> list[SessionInfo]:
    """The sessions of these folders (with `query`: those with each of its words
    in their title or message text) updated in [updated_after, updated_before),
    the most recently updated first, at most `limit`; with `worktrees`, the
    sessions of the folders' worktrees too."""
    sessions = [
        SessionInfo(workspace_uri=host.uri, **asdict(s))  # a host's listing is this, less the folder
        for host in hosts
        for s in await host.list_sessions_off_loop(query)
    ]
    if worktrees is not None:
        sessions += [_of_worktree(host, listed) for host in hosts for listed in await worktrees.listed(host.root, query)]
    sessions = [s for s in sessions if (updated_after is None or s.updated_at >= updated_after)
                and (updated_before is None or s.updated_at < updated_before)]
    sessions.sort(key=lambda s: s.updated_at, reverse=True)
    return sessions[:limit] if limit else sessions


def _of_worktree(host: WorkspaceHost, listed: Listed) -> SessionInfo:
    """A worktree's session, listed under the folder it belongs to."""
    worktree, changes = listed.worktree, listed.changes
    return SessionInfo(workspace_uri=host.uri, **asdict(listed.listing), worktree=WorktreeInfo(
        branch=worktree.branch, path=str(worktree.path), base=worktree.base, files_changed=changes.files,
        lines_added=changes.added, lines_removed=changes.removed))
