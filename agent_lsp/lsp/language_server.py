"""The agent_lsp language server's state: workspace hosts, settings, relay, progress.

`AgentLanguageServer` holds what the handlers share and finds the host of a
folder, URI or session. The handlers themselves are in `agent_lsp.lsp.features`
(registered by `agent_lsp.lsp.handlers.create_server`); how agent events reach
the client is `agent_lsp.lsp.relay`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Mapping, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from agent_lsp import __version__
from agent_lsp.config.layers import SettingsLayers
from agent_lsp.config.files import data_dir
from agent_lsp.jsonrpc import shown
from agent_lsp.lsp import capabilities
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.progress import ProgressReporter
from agent_lsp.lsp.relay import AgentEvents, Relay
from agent_lsp.lsp.rpc import AgentProtocol, SessionDamaged, SessionInUse, raw_params_converter, refused
from agent_lsp.secrets import mask
from agent_lsp.service import AgentService
from agent_lsp.service.worktree_sessions import WorktreeSessions
from agent_lsp.visible import visible
from agent_lsp.tools.paths import file_uri_to_path
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.workspace.documents import Documents
from agent_lsp.workspace.session_location import sessions_dir_for

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.lsp.host_window import HostWindow
    from agent_lsp.workspace.host import WorkspaceHost

__all__ = ["AgentLanguageServer", "ProcessPort", "raw_params_converter", "uri_to_path"]

# The agent, tools and providers load on first use (or in the background once
# initialized): `initialize` answers without waiting for them.
HOST_MODULE = "agent_lsp.workspace.host"

log = logging.getLogger(__name__)

QUIET_WAIT_S = 2.0  # how long the clean-up after the warm-up waits for the requests in flight
READY_TIMEOUT_S = 5.0  # how long a request waits for settings being pulled
MAX_SESSION_ID = 200  # a session id names files `<id>.jsonl` and `<id>.lock` (file names: 255 bytes)


class ProcessPort(Protocol):
    """What the process around the server does at the server's moments (the
    CLI's `agent_lsp.cli.server_process.ServerProcess`)."""

    def agent_code_loaded(self) -> None:
        """The agent, tools and providers have been imported in the background."""

    def host_built(self) -> None:
        """A workspace host exists: from now on shell commands may run."""

    def release_memory(self) -> None:
        """A large message has been answered: its garbage may go back to the OS."""


class _NoProcess:
    def agent_code_loaded(self) -> None:
        pass

    def host_built(self) -> None:
        pass

    def release_memory(self) -> None:
        gc.collect()


def unknown_session(session_id: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(f"unknown session {shown(session_id)}")


def uri_to_path(uri: str) -> Path | None:
    """The path of an editor's file:// URI; None for others (untitled:, remote hosts)."""
    try:
        return file_uri_to_path(uri)
    except ValueError:
        return None


def _holds(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


class AgentLanguageServer(LanguageServer):
    def __init__(self, env: Mapping[str, str] = os.environ, *, process: ProcessPort | None = None):
        super().__init__(
            capabilities.SERVER_NAME,
            __version__,
            converter_factory=raw_params_converter,
            protocol_cls=AgentProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind(capabilities.TEXT_DOCUMENT_SYNC_KIND),
            max_workers=8,
        )
        self.env = env
        self.documents = Documents()
        self.editor = LspEditor(self, self.documents)
        self.editor.review_mode_of = self.review_mode_of
        self.settings = SettingsLayers(env)
        self.folders: dict[Path, WorkspaceHost | None] = {}  # a host is built on first use
        self.backlog: Callable[[], int] = lambda: 0
        self.relay = Relay(self.protocol.notify, backlog=lambda: self.backlog())
        self.progress = ProgressReporter(self, self.spawn)
        self.command_sessions: set[str] = set()  # their turn's end is shown with window/showMessage
        self.events = AgentEvents(self.relay, self.progress, renders_events=lambda: self.editor.agent_caps.events,
                                  show=self.show, log_line=self.log_line, command_sessions=self.command_sessions)
        # Held while settings are pulled and applied; agent requests wait for it, so a
        # request sent after didChangeConfiguration runs with the new settings.
        self.settings_lock = asyncio.Lock()
        self._settings_deadline = 0.0
        self.pending_problems: list[str] = list(self.settings.problems)
        # The early phase's `workspace/configuration` (`agent_lsp.lsp.early`), which the first
        # pull takes instead of asking again: the future of its answer, or True once it was
        # applied there (its problems shown). None: the server asks itself.
        self.early_configuration: asyncio.Future | bool | None = None
        self.process = process or _NoProcess()
        self.connection_id: str | None = None  # which connection of the agent host this is (None: the process serves one)
        self.window: HostWindow | None = None  # this server's part of the host's shared sessions (on the agent host)
        self._tasks: set[asyncio.Task] = set()
        self.service = AgentService(self)  # the handlers' operations; this server is its SessionDirectory
        # sessions in their own git worktree: their hosts, kept beside the folders'
        self.worktrees = WorktreeSessions(data_dir(env) / "worktrees", self.build_host,
                                          lambda root: sessions_dir_for(root, self.settings.current, self.env))

    # --------------------------------------------------------------- plumbing

    def report_server_error(self, error: Exception, source: Any) -> None:
        # The default pops "Error in server" dialogs; an agent product logs instead.
        if refused(error):  # the client's request refused with a reason: the client has it
            log.debug("request refused: %s", error)
            return
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    def spawn(self, coroutine) -> asyncio.Task:
        """A background task with a strong reference (otherwise it may be collected)."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=visible(message)))

    def log_line(self, line: str) -> None:
        """One line of the conversation for a client that does not render events (window/logMessage)."""
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Info, message=visible(mask(line))))

    def report_problems(self, problems: list[str]) -> None:
        for problem in problems:
            log.warning("%s", problem)
            self.show(f"agent-lsp: {problem}", types.MessageType.Warning)

    @contextlib.asynccontextmanager
    async def changing_settings(self) -> AsyncIterator[None]:
        """Hold the settings while they are pulled or applied; requests wait for
        them (`ready`) at most READY_TIMEOUT_S from the start of the change."""
        async with self.settings_lock:
            self._settings_deadline = time.monotonic() + READY_TIMEOUT_S
            yield

    async def ready(self) -> None:
        """Wait until settings being pulled or applied (initialized, didChangeConfiguration) are in place."""
        wait_s = READY_TIMEOUT_S
        if self.settings_lock.locked():
            # The bound runs from the change's start: a client that never answers
            # costs the first request the wait, not every request.
            wait_s = self._settings_deadline - time.monotonic()
            if wait_s <= 0:
                return
        try:
            # Not wait_for: its task held the lock over loop turns, so requests that
            # arrived together (ten followups) went through one or two turns apart.
            async with asyncio.timeout(wait_s):
                await self.settings_lock.acquire()
        except TimeoutError:
            log.warning("settings still being pulled after %.0f s; going on", READY_TIMEOUT_S)
            return
        self.settings_lock.release()

    def warm_up(self) -> None:
        """Import the agent machinery in the background, so the first request is quick."""
        import importlib
        import time

        def load() -> None:
            importlib.import_module(HOST_MODULE)
            # What the process does then (a full garbage collection: tens of ms holding
            # the GIL) waits until the requests read meanwhile, most often the first
            # agent/session/new, are answered.
            deadline = time.monotonic() + QUIET_WAIT_S
            while self.protocol.answering() and time.monotonic() < deadline:
                time.sleep(0.005)
            self.process.agent_code_loaded()

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
            host = self.build_host(root, on_built=lambda built: self.folders.__setitem__(root, built))
        return host

    def build_host(self, root: Path, on_built: Callable[[WorkspaceHost], None] | None = None) -> WorkspaceHost:
        """A host for `root` (a workspace folder, or a worktree session's folder)."""
        from agent_lsp.workspace.host import WorkspaceHost

        self.process.host_built()
        editor = self.editor if self.window is None else self.window.editor_for(root)
        host = WorkspaceHost(root, settings=self.settings.current, editor=editor, env=self.env,
                             on_agent=self.agent_built, editor_language=self.editor_language(),
                             window=self.connection_id)
        host.warm_up()
        if on_built is not None:
            on_built(host)
        if self.window is not None:
            self.window.joined(host)
        return host

    def editor_language(self):
        """How the hosts ask the editor's own language servers (None when, once asked,
        the client did not declare it can relay)."""
        from agent_lsp.lsp.language_relay import relay_factory

        return relay_factory(self.protocol, self.editor)

    @property
    def hosts(self) -> list[WorkspaceHost]:
        """Every folder's host (built now if need be)."""
        return [self.host(root) for root in list(self.folders)]

    def all_hosts(self) -> list[WorkspaceHost]:
        return self.hosts

    @property
    def live_hosts(self) -> list[WorkspaceHost]:
        """The hosts built so far: the folders', then the worktree sessions'."""
        return [host for host in self.folders.values() if host is not None] + self.worktrees.live_hosts()

    def agent_built(self, agent: Agent) -> None:
        """A host of this server built an agent: its events go to this client
        (and, on the agent host, to the windows that follow its session)."""
        unsubscribe = self.events.attach(agent)
        if self.window is not None:
            self.window.own(agent, unsubscribe)
            self.window.built(agent)

    def presence(self, session_id: str, windows: int) -> None:
        """On the agent host: how many windows have this session open (a client that renders events shows it)."""
        if self.editor.agent_caps.events:
            self.relay.live(session_id, "agent/session/presence", {"windows": windows})

    def adopt_host(self, root: Path, host: WorkspaceHost) -> None:
        """A host built before this server existed (the early phase's) is this server's."""
        host.on_agent = self.agent_built
        host.use_editor_language(self.editor_language())
        self.folders[root] = host
        if self.window is not None:
            self.window.joined(host)

    async def close_hosts(self) -> None:
        """Close every folder's host (its sessions, their turns and commands) and
        the relay; on the agent host, the hosts other windows still follow stay."""
        hosts, self.folders = self.live_hosts, {}
        self.worktrees.release()
        if self.window is not None:
            hosts = self.window.left(hosts)
        for host in hosts:
            await host.close()
        self.relay.close()

    async def remove_folder(self, root: Path) -> None:
        host = self.folders.pop(root.resolve(), None)
        if host is not None:
            if self.window is not None:
                self.window.removed(host)
            await host.close()

    def review_mode_of(self, paths: list[Path]) -> str:
        """The effective edits.review of the folders holding these paths ("review"
        if any folder is in review mode): what an agent edit of them that carries
        no mode of its own tells the client (an edit_file or write_file edit carries
        the mode it was made under, read once, so it is never both saved and pending)."""
        modes = [host.settings.edits.review for root, host in self.folders.items()
                 if host is not None and any(_holds(root, path) for path in paths)]
        if "review" in modes:
            return "review"
        return modes[0] if modes else self.settings.current.edits.review

    def folder_of(self, path: Path) -> Path | None:
        """The workspace folder holding `path` (or being it), if one does."""
        return next((root for root in self.folders if _holds(root, path)), None)

    def host_holding(self, path: Path) -> WorkspaceHost | None:
        """The host of the workspace folder holding `path`, if one does."""
        folder = self.folder_of(path)
        return self.host(folder) if folder is not None else None

    def uri_of(self, path: Path) -> str:
        """The URI the editor uses for the file: its own when the file is open."""
        return self.documents.uri_of(path)

    def host_for_uri(self, uri: str | None) -> WorkspaceHost:
        """The host of a workspace folder URI (or of a folder containing it); no URI: the first folder."""
        if uri is None:
            if self.folders:
                return self.host(next(iter(self.folders)))
            return self.host(Path.cwd())  # no folder, no rootUri: where the editor started us
        path = uri_to_path(uri)
        if path is None:
            raise JsonRpcInvalidParams(f"workspaceUri: not a file URI: {shown(uri)}")
        try:
            path = path.resolve()
            folder = self.folder_of(path)
            if folder is None and path.is_dir():
                folder = path
        except (OSError, ValueError):  # too long for a path, a NUL in it
            folder = None
        if folder is not None:
            return self.host(folder)
        raise JsonRpcInvalidParams(f"workspaceUri: not a workspace folder: {shown(uri)}")

    def host_for_session(self, session_id: str) -> WorkspaceHost:
        if not session_id:
            raise JsonRpcInvalidParams("sessionId: must not be empty")
        for host in self.live_hosts:
            if session_id in host.agents:
                return host
        if len(session_id) <= MAX_SESSION_ID:  # longer ones cannot name a session file
            for host in self.hosts:
                try:
                    if host.has_session(session_id):
                        return host
                except (ValueError, OSError):  # not a file name (a path, a NUL)
                    break
            host = self.worktrees.find(session_id, list(self.folders))  # a session in its own worktree
            if host is not None:
                return host
        raise unknown_session(session_id)

    def agent_for(self, session_id: str) -> tuple[WorkspaceHost, Agent]:
        host = self.host_for_session(session_id)
        try:
            return host, host.use(session_id)
        except KeyError:  # UnknownSession: deleted meanwhile
            raise unknown_session(session_id) from None
        except SessionLockedError as error:
            followed = self.window.follow(host, session_id) if self.window is not None else None
            if followed is not None:  # open in another window of the agent host: followed, live
                return followed
            raise SessionInUse(error) from None
        except CorruptSessionError as error:  # agent/session/load shows what is readable (session_requests.py)
            raise SessionDamaged(session_id, error) from None
