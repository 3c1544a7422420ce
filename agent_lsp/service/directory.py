"""What the service needs of a face: its folders' hosts and its sessions' agents.

Each face knows its folders its own way (LSP: the workspace folders of the
editor, built on first use; ACP: the `cwd` of each session) and says "no such
session" in its own protocol, so the lookups are the face's: the errors they
raise reach the face unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost


class SessionDirectory(Protocol):
    def host_for_session(self, session_id: str) -> WorkspaceHost:
        """The host of the folder the session belongs to (the face's error when none)."""

    def host_for_uri(self, uri: str | None) -> WorkspaceHost:
        """The host of a workspace folder URI; None: the face's default folder."""

    def agent_for(self, session_id: str) -> tuple[WorkspaceHost, Agent]:
        """The session's host and live agent, loaded (or rebuilt) if need be."""

    def all_hosts(self) -> list[WorkspaceHost]:
        """Every folder's host, built if need be."""

    def host_holding(self, path: Path) -> WorkspaceHost | None:
        """The host of the folder holding `path`, if one does."""

    def uri_of(self, path: Path) -> str:
        """The URI the client knows a file by (its own spelling where it has the file open)."""
