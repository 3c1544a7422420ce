"""The agent_lsp language server's state: workspace hosts, settings, relay, progress.

`AgentLanguageServer` holds what the handlers share and finds the host of a
folder, URI or session. The handlers themselves are in `agent_lsp.lsp.features`
(registered by `agent_lsp.lsp.handlers.create_server`); how agent events reach
the client is `agent_lsp.lsp.agent_events`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from agent_lsp import __version__
from agent_lsp.config import SettingsLayers
from agent_lsp.lsp.agent_events import AgentEvents
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.progress import ProgressReporter
from agent_lsp.lsp.relay import Relay
from agent_lsp.lsp.rpc import AgentProtocol, SessionInUse, raw_params_converter
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.workspace.documents import Documents

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost

__all__ = ["AgentLanguageServer", "raw_params_converter", "uri_to_path"]

# The agent, tools and providers load on first use (or in the background once
# initialized): `initialize` answers without waiting for them.
HOST_MODULE = "agent_lsp.workspace.host"

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 5.0  # how long a request waits for settings being pulled


def uri_to_path(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


class AgentLanguageServer(LanguageServer):
    def __init__(self, env: Mapping[str, str] = os.environ, *, after_warm_up: Callable[[], None] = lambda: None):
        super().__init__(
            "agent-lsp",
            __version__,
            converter_factory=raw_params_converter,
            protocol_cls=AgentProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            max_workers=8,
        )
        self.env = env
        self.documents = Documents()
        self.editor = LspEditor(self, self.documents)
        self.settings = SettingsLayers(env)
        self.folders: dict[Path, WorkspaceHost | None] = {}  # a host is built on first use
        self.backlog: Callable[[], int] = lambda: 0
        self.relay = Relay(self._send_notification, backlog=lambda: self.backlog())
        self.progress = ProgressReporter(self, self.spawn)
        self.events = AgentEvents(self)
        self.command_sessions: set[str] = set()  # their turn's end is shown with window/showMessage
        # Held while settings are pulled and applied; agent requests wait for it, so a
        # request sent after didChangeConfiguration runs with the new settings.
        self.settings_lock = asyncio.Lock()
        self.pending_problems: list[str] = list(self.settings.problems)
        self._after_warm_up = after_warm_up  # the process's own step once the agent code has loaded
        self._tasks: set[asyncio.Task] = set()

    # --------------------------------------------------------------- plumbing

    def report_server_error(self, error: Exception, source: Any) -> None:
        # The default pops "Error in server" dialogs; an agent product logs instead.
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    def spawn(self, coroutine) -> asyncio.Task:
        """A background task with a strong reference (otherwise it may be collected)."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _send_notification(self, method: str, params: dict[str, Any]) -> None:
        self.protocol.notify(method, params)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_problems(self, problems: list[str]) -> None:
        for problem in problems:
            log.warning("%s", problem)
            self.show(f"agent-lsp: {problem}", types.MessageType.Warning)

    async def ready(self) -> None:
        """Wait until settings being pulled or applied (initialized, didChangeConfiguration) are in place."""
        try:
            await asyncio.wait_for(self.settings_lock.acquire(), READY_TIMEOUT_S)
        except asyncio.TimeoutError:
            log.warning("settings still being pulled after %.0f s; going on", READY_TIMEOUT_S)
            return
        self.settings_lock.release()

    def warm_up(self) -> None:
        """Import the agent machinery in the background, so the first request is quick."""
        import importlib

        def load() -> None:
            importlib.import_module(HOST_MODULE)
            self._after_warm_up()

        threading.Thread(target=load, name="agent-lsp-warm-up", daemon=True).start()

    # ---------------------------------------------------------------- hosts

    def add_folder(self, root: Path) -> Path:
        root = root.resolve()
        self.folders.setdefault(root, None)
        return root

    def host(self, root: Path) -> WorkspaceHost:
        root = self.add_folder(root)
        host = self.folders[root]
        if host is None:
            from agent_lsp.workspace.host import WorkspaceHost

            host = WorkspaceHost(root, settings=self.settings.current, editor=self.editor, env=self.env,
                                 on_agent=self.events.attach)
            self.folders[root] = host
        return host

    @property
    def hosts(self) -> list[WorkspaceHost]:
        """Every folder's host (built now if need be)."""
        return [self.host(root) for root in list(self.folders)]

    @property
    def live_hosts(self) -> list[WorkspaceHost]:
        return [host for host in self.folders.values() if host is not None]

    async def remove_folder(self, root: Path) -> None:
        host = self.folders.pop(root.resolve(), None)
        if host is not None:
            await host.close()

    def host_for_uri(self, uri: str | None) -> WorkspaceHost:
        """The host of a workspace folder URI (or of a folder containing it); no URI: the first folder."""
        if uri is None:
            if self.folders:
                return self.host(next(iter(self.folders)))
            return self.host(Path.cwd())  # no folder, no rootUri: where the editor started us
        path = uri_to_path(uri)
        if path is None:
            raise JsonRpcInvalidParams(f"workspaceUri: not a file URI: {uri}")
        path = path.resolve()
        for root in list(self.folders):
            if path == root or root in path.parents:
                return self.host(root)
        if path.is_dir():
            return self.host(path)
        raise JsonRpcInvalidParams(f"workspaceUri: not a workspace folder: {uri}")

    def host_for_session(self, session_id: str) -> WorkspaceHost:
        for host in self.live_hosts:
            if session_id in host.agents:
                return host
        for host in self.hosts:
            if host.has_session(session_id):
                return host
        raise JsonRpcInvalidParams(f"unknown session {session_id}")

    def agent_for(self, session_id: str) -> tuple[WorkspaceHost, Agent]:
        host = self.host_for_session(session_id)
        try:
            return host, host.use(session_id)
        except KeyError:  # UnknownSession: deleted meanwhile
            raise JsonRpcInvalidParams(f"unknown session {session_id}") from None
        except SessionLockedError as error:
            raise SessionInUse(error) from None
