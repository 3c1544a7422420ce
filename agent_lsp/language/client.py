"""One language server process we run, as an LSP client (pygls' client side).

It keeps the documents the agent works on open in the server with the text
the agent sees (the editor's buffer, else disk), numbered by our own versions,
and records what the server publishes per document and version, so a waiter
can ask "has it published for version N yet" instead of trusting whatever
came last. The process runs in its own process group that dies with our
server, even on kill -9 (`agent_lsp.process`), with the environment commands
get (no secrets), in the commands' sandbox where one works (the command line
comes from `agent_lsp.language.confine`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import BaseLanguageClient
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol

from agent_lsp import __version__
from agent_lsp.language.specs import ServerSpec
from agent_lsp.process import GroupGuard, die_with_parent
from agent_lsp.tools.command_env import CommandEnvPolicy, command_env

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
# A work-done progress the server created: it counts as work under way from its
# creation (pyright creates it when a check starts and sends `begin` only after our
# reply, behind the first reports of that check: seconds later on a loaded
# machine), for at most this long if no `begin` follows.
CREATED_PROGRESS_S = 10.0
SHUTDOWN_TIMEOUT_S = 2.0
T = TypeVar("T")


class ServerFailed(Exception):
    """The server could not start, went away or did not answer; the message says which."""


@dataclass
class Published:
    version: int | None
    diagnostics: list[lsp.Diagnostic]
    at: float


@dataclass
class OpenDocument:
    version: int
    text: str
    language_id: str
    sent_at: float = field(default_factory=time.monotonic)  # when this version went to the server


@dataclass
class _Waiters:
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class _TolerantProtocol(LanguageServerProtocol):
    """A reply lsprotocol cannot type (ruff's initialize result names notebook
    filters lsprotocol's converter rejects) is kept as plain JSON instead of being
    dropped, which would leave the request waiting for ever."""

    def structure_message(self, data: dict[str, Any]):
        if "jsonrpc" not in data or "id" not in data or "method" in data or "error" in data:
            return super().structure_message(data)
        response_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        try:
            return self._converter.structure(data, response_type)
        except Exception as error:
            log.info("a language server's reply is kept untyped: %s", str(error).splitlines()[0])
            return self._converter.structure(data, JsonRPCResponseMessage)


class ServerClient:
    """A started server for one root. `start()` first; `stop()` ends it."""

    def __init__(self, spec: ServerSpec, executable: str, root: Path, argv: list[str] | None = None,
                 placement: str = "not sandboxed", sandboxed: bool = False):
        self.spec = spec
        self.executable = executable
        self.root = root
        self.argv = argv or [executable, *spec.args]  # in the sandbox where `placement` says (language/confine.py)
        self.placement = placement
        # In the sandbox's own process ids our process id names nothing: a server told
        # it (pyright) would take us for gone and exit. The sandbox ends with us anyway.
        self.sandboxed = sandboxed
        self.published: dict[str, Published] = {}  # uri -> the last publish
        self.documents: dict[str, OpenDocument] = {}  # uri -> what the server has open
        self.workspace_symbols = False  # the server answers workspace/symbol
        self.last_used = time.monotonic()
        self.failure: str | None = None  # set once the server is gone
        # The server numbers its reports of open documents (known for some, else learnt from the first one).
        self.numbers_versions = spec.versioned_diagnostics
        self.busy: set[Any] = set()  # work-done progress under way (a server checking the workspace)
        self._created: dict[Any, float] = {}  # progress tokens created, not begun yet -> when
        self.last_activity = 0.0  # the last report or progress, loop time
        self._waiters = _Waiters()
        self._guard: GroupGuard | None = None
        self._stderr_task: asyncio.Task | None = None
        self._stderr_tail: list[str] = []
        self._client = BaseLanguageClient("agent-lsp", __version__, protocol_cls=_TolerantProtocol)
        self._register_handlers()

    # ---------------------------------------------------------------- start

    def _register_handlers(self) -> None:
        client = self._client

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            if params.version is not None:
                self.numbers_versions = True
            elif self.numbers_versions and params.uri in self.documents:
                return  # a workspace-wide pass's report, not one of the text we sent
            self.published[params.uri] = Published(params.version, list(params.diagnostics), time.monotonic())
            self.last_activity = time.monotonic()
            self._waiters.notify()

        @client.feature(lsp.WORKSPACE_CONFIGURATION)
        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            return [self._setting(item.section) for item in params.items]

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params: lsp.WorkDoneProgressCreateParams) -> None:
            self._created[params.token] = time.monotonic()
            self.last_activity = time.monotonic()
            self._waiters.notify()
            return None

        @client.feature(lsp.PROGRESS)
        def progress(params: lsp.ProgressParams) -> None:
            kind = params.value.get("kind") if isinstance(params.value, dict) else getattr(params.value, "kind", None)
            if kind == "begin":
                self.busy.add(params.token)
            elif kind == "end":
                self.busy.discard(params.token)
            if kind in ("begin", "end"):
                self._created.pop(params.token, None)
            self.last_activity = time.monotonic()
            self._waiters.notify()

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register(params: lsp.RegistrationParams) -> None:
            return None

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def log_message(params: lsp.LogMessageParams) -> None:
            log.debug("%s: %s", self.spec.name, params.message)

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def show_message(params: lsp.ShowMessageParams) -> None:
            log.info("%s says: %s", self.spec.name, params.message)

        async def server_exit(server: asyncio.subprocess.Process) -> None:
            if self.failure is None and self._stderr_task is not None:
                await asyncio.wait({self._stderr_task}, timeout=0.5)  # its last words, for the message
            if self.failure is None:
                tail = " ".join(self._stderr_tail[-3:]).strip()
                self.failure = f"{self.spec.name} exited (code {server.returncode})" + (f": {tail[:300]}" if tail else "")
                log.warning("%s", self.failure)
            self._waiters.notify()

        client.server_exit = server_exit  # type: ignore[method-assign]

    def _setting(self, section: str | None) -> Any:
        settings = self.spec.settings
        if not section:
            return dict(settings)
        value: Any = settings
        for part in section.split("."):
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    async def start(self) -> None:
        env = {**command_env(CommandEnvPolicy()), **self.spec.env}
        try:
            await self._client.start_io(
                self.argv[0], *self.argv[1:], cwd=str(self.root), env=env,
                start_new_session=True, preexec_fn=die_with_parent(),
            )
        except OSError as error:
            raise ServerFailed(f"{self.spec.name} could not start: {error.strerror or error}") from None
        process = self._client._server
        if process is not None:
            self._guard = GroupGuard.start(process.pid)  # the server's group dies with us
            if process.stderr is not None:
                self._stderr_task = asyncio.ensure_future(self._drain(process.stderr))
        uri = self.root.as_uri()
        params = lsp.InitializeParams(
            process_id=None if self.sandboxed else os.getpid(),
            root_uri=uri,
            root_path=str(self.root),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=self.root.name)],
            initialization_options=dict(self.spec.initialization_options) or None,
            capabilities=_CAPABILITIES,
            client_info=lsp.ClientInfo(name="agent-lsp", version=__version__),
        )
        try:
            result = await self.request(self._client.initialize_async(params), START_TIMEOUT_S, "initialize")
        except ServerFailed:
            await self.stop()
            raise
        capabilities = getattr(result, "capabilities", None)  # typed, or kept as JSON (_TolerantProtocol)
        self.workspace_symbols = bool(getattr(capabilities, "workspace_symbol_provider", None)
                                      or getattr(capabilities, "workspaceSymbolProvider", None))
        self._client.initialized(lsp.InitializedParams())
        self._client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings=dict(self.spec.settings)))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        """Read stderr so a chatty server never blocks on a full pipe; keep the last lines."""
        while line := await stream.readline():
            self._stderr_tail = (self._stderr_tail + [line.decode("utf-8", "replace").rstrip()])[-10:]

    # ------------------------------------------------------------ documents

    def sync(self, path: Path, text: str) -> int:
        """Make the server see `text` for `path`; the version it now has."""
        self.last_used = time.monotonic()
        uri = path.as_uri()
        document = self.documents.get(uri)
        if document is None:
            document = OpenDocument(1, text, self.spec.language_id(path))
            self.documents[uri] = document
            self._notify(self._client.text_document_did_open,
                         lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
                             uri=uri, language_id=document.language_id, version=1, text=text)))
        elif document.text != text:
            document.version += 1
            document.text = text
            document.sent_at = time.monotonic()
            self._notify(self._client.text_document_did_change, lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(version=document.version, uri=uri),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
        return document.version

    def _notify(self, send: Callable[[Any], None], params: Any) -> None:
        """Send a notification unless the server is gone (then waiters learn why from `failure`)."""
        if self.failure is not None:
            return
        try:
            send(params)
        except RuntimeError as error:  # pygls: the client stopped under us (the server exited)
            self.failure = self.failure or f"{self.spec.name} went away: {error}"
            self._waiters.notify()

    def close_document(self, path: Path) -> None:
        uri = path.as_uri()
        if self.documents.pop(uri, None) is not None:
            self._notify(self._client.text_document_did_close,
                         lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def did_delete(self, path: Path) -> None:
        """The file is gone: closed, and told as the file watcher servers rely on would tell it."""
        self.close_document(path)
        self._notify(self._client.workspace_did_delete_files, lsp.DeleteFilesParams(files=[lsp.FileDelete(uri=path.as_uri())]))
        self._notify(self._client.workspace_did_change_watched_files, lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=path.as_uri(), type=lsp.FileChangeType.Deleted)]))

    def active_since(self, moment: float) -> bool:
        return self.last_activity >= moment

    def has_published(self, uri: str) -> bool:
        """The server published for the version of `uri` it has now."""
        published, document = self.published.get(uri), self.documents.get(uri)
        if published is None or document is None:
            return False
        if published.version is not None:
            return published.version == document.version
        # A server that does not number its publishes: one that came after this version was sent.
        return published.at >= document.sent_at

    async def wait_for(self, ready: Callable[[], bool], deadline: float) -> bool:
        """Wait until `ready()` or the server is gone or the deadline (loop time) passes."""
        while not ready():
            if self.failure is not None:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._waiters.changed.wait(), remaining)
            except asyncio.TimeoutError:
                return ready()
        return True

    def working_until(self, now: float) -> float | None:
        """While the server reports work under way (a progress begun, or created and
        not begun for CREATED_PROGRESS_S): until when it counts as working; else None."""
        if self.busy:
            return float("inf")
        created = [at + CREATED_PROGRESS_S for at in self._created.values() if at + CREATED_PROGRESS_S > now]
        return max(created) if created else None

    def settled(self, quiet_s: float) -> bool:
        """No work under way and nothing reported for `quiet_s`: its last reports are its whole answer."""
        now = time.monotonic()
        return self.working_until(now) is None and now >= self.last_activity + quiet_s

    async def wait_quiet(self, quiet_s: float, deadline: float) -> bool:
        """Until the server reported no work under way and nothing for `quiet_s`
        (the other files it re-checks after a change); False if the deadline came first."""
        while self.failure is None:
            now = time.monotonic()
            working = self.working_until(now)
            wake = min(working if working is not None else self.last_activity + quiet_s, deadline)
            if wake <= now:
                return self.settled(quiet_s)
            try:
                await asyncio.wait_for(self._waiters.changed.wait(), wake - now)
            except asyncio.TimeoutError:
                pass
        return False

    # ------------------------------------------------------------- requests

    @property
    def lsp(self) -> BaseLanguageClient:
        self.last_used = time.monotonic()
        return self._client

    async def request(self, call: Awaitable[T], timeout_s: float, what: str) -> T:
        if self.failure is not None:
            if asyncio.iscoroutine(call):
                call.close()
            raise ServerFailed(self.failure)
        task = asyncio.ensure_future(call)
        try:
            return await asyncio.wait_for(task, timeout_s)
        except asyncio.TimeoutError:
            raise ServerFailed(f"{self.spec.name} did not answer {what} within {timeout_s:g} s") from None
        except ServerFailed:
            raise
        except Exception as error:  # a JSON-RPC error, or the process went away
            raise ServerFailed(f"{self.spec.name} failed on {what}: {error}") from None

    # ----------------------------------------------------------------- stop

    async def stop(self) -> None:
        process = self._client._server
        if self.failure is None and process is not None and process.returncode is None:
            self.failure = f"{self.spec.name} was stopped"
            try:
                await asyncio.wait_for(self._client.shutdown_async(None), SHUTDOWN_TIMEOUT_S)
                self._client.exit(None)
                await asyncio.wait_for(process.wait(), SHUTDOWN_TIMEOUT_S)
            except Exception:
                pass
        self.failure = self.failure or f"{self.spec.name} was stopped"
        if process is not None and process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            await asyncio.wait_for(self._client.stop(), SHUTDOWN_TIMEOUT_S)
        except Exception:
            pass
        if self._stderr_task is not None:
            self._stderr_task.cancel()
        if self._guard is not None:
            self._guard.release()
            self._guard = None


_CAPABILITIES = lsp.ClientCapabilities(
    general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    workspace=lsp.WorkspaceClientCapabilities(
        configuration=True,
        workspace_folders=True,
        apply_edit=False,
        workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True),
        file_operations=lsp.FileOperationClientCapabilities(did_delete=True),
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(),
        symbol=lsp.WorkspaceSymbolClientCapabilities(),
    ),
    text_document=lsp.TextDocumentClientCapabilities(
        synchronization=lsp.TextDocumentSyncClientCapabilities(),
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
        definition=lsp.DefinitionClientCapabilities(link_support=False),
        references=lsp.ReferenceClientCapabilities(),
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown]),
        document_symbol=lsp.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
        rename=lsp.RenameClientCapabilities(prepare_support=False),
        code_action=lsp.CodeActionClientCapabilities(
            code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                code_action_kind=lsp.ClientCodeActionKindOptions(value_set=[
                    lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Refactor, lsp.CodeActionKind.Source,
                    lsp.CodeActionKind.SourceOrganizeImports]))),
    ),
    window=lsp.WindowClientCapabilities(work_done_progress=True),
)
