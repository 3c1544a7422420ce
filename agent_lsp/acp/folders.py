"""The folders of an ACP connection and the session each belongs to.

A session's folder is the `cwd` the client named in `session/new` or
`session/load`; each folder has one WorkspaceHost, built on first use. A
session is known once its agent was built in this connection (a host calls
back for every agent it builds, rebuilt ones included). `AcpFolders` is the
application service's `SessionDirectory` for this face: its lookups answer
ACP's errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from acp import RequestError

from agent_lsp.acp.damaged import damaged
from agent_lsp.jsonrpc import shown
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.tools.paths import file_uri_to_path

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost

SESSION_IN_USE_CODE = -32010  # the LSP face's code for the same refusal (docs/protocol.md)


def invalid(message: str, **data: Any) -> RequestError:
    return RequestError(-32602, message, data or None)


def in_use(session_id: str, error: SessionLockedError) -> RequestError:
    return RequestError(SESSION_IN_USE_CODE, f"session {session_id} is open in another agent-lsp process: {error}",
                        {"sessionId": session_id})


class AcpFolders:
    def __init__(self, build: Callable[[Path], WorkspaceHost]):
        self._build = build  # a new folder's host
        self.hosts: dict[Path, WorkspaceHost] = {}
        self._of_session: dict[str, WorkspaceHost] = {}

    def host(self, cwd: str) -> WorkspaceHost:
        """The host of the client's `cwd` (an absolute path to a directory)."""
        root = Path(cwd)
        if not root.is_absolute():
            raise invalid(f"cwd must be an absolute path, got {cwd!r}", cwd=cwd)
        if not root.is_dir():
            raise invalid(f"cwd {cwd} is not a directory", cwd=cwd)
        root = root.resolve()
        host = self.hosts.get(root)
        if host is None:
            host = self.hosts[root] = self._build(root)
        return host

    def attached(self, agent: Agent) -> WorkspaceHost:
        """The host that built `agent`; from now on its session is known here."""
        host = next(h for h in self.hosts.values() if h.agents.get(agent.session_id) is agent)
        self._of_session[agent.session_id] = host
        return host

    def opened_read_only(self, host: WorkspaceHost, session_id: str) -> None:
        """A damaged session the client opened: known here, its requests answered
        with the damage (its host refuses to build its agent)."""
        self._of_session[session_id] = host

    # ------------------------------------------------------ SessionDirectory

    def host_for_session(self, session_id: str) -> WorkspaceHost:
        host = self._of_session.get(session_id)
        if host is None:
            raise invalid(f"unknown session {shown(session_id)}: create it with session/new or open it with session/load",
                          sessionId=session_id)
        return host

    def host_for_uri(self, uri: str | None) -> WorkspaceHost:
        if uri is None:
            raise invalid("a folder is required (the session's cwd)")
        try:
            return self.host(str(file_uri_to_path(uri)))
        except ValueError:
            raise invalid(f"not a file URI: {uri[:80]}") from None

    def agent_for(self, session_id: str) -> tuple[WorkspaceHost, Agent]:
        """The session's agent, built again if its host retired it (changed rules or hooks)."""
        from agent_lsp.workspace.host import UnknownSession

        host = self.host_for_session(session_id)
        try:
            return host, host.agent(session_id)
        except UnknownSession:
            raise invalid(f"session {shown(session_id)} is closed", sessionId=session_id) from None
        except SessionLockedError as error:
            raise in_use(session_id, error) from None
        except CorruptSessionError as error:  # read-only: shown by session/load, never written
            raise damaged(session_id, error) from None

    def all_hosts(self) -> list[WorkspaceHost]:
        return list(self.hosts.values())

    def host_holding(self, path: Path) -> WorkspaceHost | None:
        return next((host for root, host in self.hosts.items() if path == root or root in path.parents), None)

    def uri_of(self, path: Path) -> str:
        return Path(path).as_uri()
