"""The test editor: the real server as a subprocess, driven by pytest-lsp's client.

The editor records every notification, answers `agent/permission` (an answer,
or NEVER) and `agent/saveDocuments`, and offers `wait_*` helpers that poll with
a deadline (no fixed sleeps). It keeps open buffers with versions (`open`,
`type`, `close`: didOpen/didChange/didClose) and applies `workspace/applyEdit`
like a real editor: to the open buffer when the file is open (version-checked:
an edit computed on an older version is refused), else on disk. A test can type
into a buffer just before an edit lands (`before_apply`), act while an edit is
on its way (`while_applying`), hold or refuse edits, and have applied edits'
buffers saved as our VS Code and Neovim plugins do (`plugin_saves`).

Deadlines stretch with the machine's load (`stretched`): a correct server on a
busy CI machine gets its time, a hung one still fails, saying what was awaited
and for how long.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections import defaultdict
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import attrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from agent_lsp.lsp.apply_edit_params import AgentApplyEditParams
from agent_lsp.lsp.language_server import raw_params_converter

NEVER = "never"  # a permission or message answer: the editor never answers
TIMEOUT_S = 10.0  # what an answer may take on an idle machine
MAX_STRETCH = 6.0  # on a loaded one it may take up to this many times as long


def stretched(timeout: float) -> float:
    """`timeout` seconds stretched by the machine's load now (the 1-minute load average
    per core, 1 to MAX_STRETCH times): on two cores at load 8 a 10 s wait becomes 40 s."""
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this system
        per_core = 1.0
    return timeout * min(MAX_STRETCH, max(1.0, per_core))


async def answered(awaitable: Awaitable[Any], what: str, timeout: float = TIMEOUT_S) -> Any:
    """The answer of `awaitable`, waited for `timeout` seconds, longer while the machine is
    loaded (asked again when `timeout` has passed); TimeoutError saying what and how long."""
    task = asyncio.ensure_future(awaitable)
    started = time.monotonic()
    limit = timeout
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=max(0.0, limit - (time.monotonic() - started)))
            if done:
                return task.result()
            waited = time.monotonic() - started
            limit = stretched(timeout)
            if waited >= limit:
                raise TimeoutError(f"no answer to {what} within {waited:.1f} s (load average {_load():.1f})")
    finally:
        task.cancel()  # a no-op once answered


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


class EditorUnderTest:
    def __init__(self, client: LanguageClient):
        self.client = client
        self.notifications: list[tuple[str, dict]] = []
        self.events: dict[str, list[dict]] = defaultdict(list)
        self.statuses: list[tuple[str, str]] = []
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        self.permission_requests: list[dict] = []
        self.registrations: list[dict] = []  # client/registerCapability (file watchers)
        self.saved: list[list[str]] = []
        self.permission_answer = "once"
        self.apply_edits = True
        self.hold_edits: asyncio.Event | None = None
        self.configuration_pulls = 0
        self.initialize_result: types.InitializeResult | None = None
        self.killed = False
        self.buffers: dict[Path, tuple[str, int]] = {}  # open documents: text, version
        self.before_apply: Callable[[types.ApplyWorkspaceEditParams], None] | None = None
        self.while_applying: Callable[[types.ApplyWorkspaceEditParams], Awaitable[None]] | None = None
        self.plugin_saves = False
        self.plugin_saved: list[Path] = []  # buffers written after an applied edit, as a plugin does
        self.show_message_requests: list[types.ShowMessageRequestParams] = []
        self.message_answer = "Allow once"
        self.never = asyncio.Event()  # what a NEVER answer waits for: set when the server is stopped

    @property
    def server_pid(self) -> int:
        return self.client._server.pid  # type: ignore[union-attr]

    async def kill(self) -> None:
        """kill -9 the server, as a crash would."""
        os.kill(self.server_pid, signal.SIGKILL)
        await self.client._server.wait()  # type: ignore[union-attr]
        self.killed = True

    def configure(self, settings: dict) -> None:
        """Change the editor's `agentLsp` settings and tell the server (didChangeConfiguration)."""
        self.client.set_configuration(settings, section="agentLsp")
        self.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

    def use_script(self, script: list) -> None:
        """New sessions (and idle ones) answer with this scripted model from now on."""
        self.configure({"model": {"provider": "scripted", "script": script}})

    # ------------------------------------------------------------ requests

    async def request(self, method: str, params: Any = None) -> Any:
        return await answered(self.client.protocol.send_request_async(method, params), method)

    async def raw_request(self, method: str, params: dict) -> Any:
        """A request whose result stays plain JSON (no lsprotocol structuring on our side)."""
        protocol = self.client.protocol
        patched = ("get_result_type", "get_message_type")
        originals = {name: getattr(protocol, name) for name in patched}
        for name in patched:
            setattr(protocol, name, lambda m: None)
        try:
            future = protocol.send_request(method, params)
        finally:
            for name, original in originals.items():
                setattr(protocol, name, original)
        return await answered(asyncio.wrap_future(future), method)

    async def command(self, name: str, *arguments: Any) -> Any:
        return await answered(
            self.client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(arguments))),
            f"the command {name}",
        )

    # ------------------------------------------------------------- waiting

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = TIMEOUT_S, what: str = "condition") -> Any:
        return await wait_until(predicate, timeout, what)

    async def wait_idle(self, session_id: str, after: int = 0) -> None:
        """Wait for an `agent/status idle` of the session (counting from status index `after`)."""
        await self.wait_for(
            lambda: any(s == (session_id, "idle") for s in self.statuses[after:]), what=f"{session_id} idle"
        )

    def event_types(self, session_id: str) -> list[str]:
        return [e["type"] for e in self.events[session_id]]

    def streamed_text(self, session_id: str) -> str:
        return "".join(
            e["data"]["chunk"].get("text", "")
            for e in self.events[session_id]
            if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta"
        )

    def of(self, method: str) -> list[dict]:
        return [p for m, p in self.notifications if m == method]

    # -------------------------------------------------------------- buffers

    def open(self, path: Path, text: str | None = None) -> None:
        text = path.read_text(encoding="utf-8") if text is None else text
        self.buffers[path] = (text, 1)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)
            )
        )

    def type(self, path: Path, text: str) -> None:
        """The user replaces the buffer's text (unsaved)."""
        _, version = self.buffers[path]
        self.buffers[path] = (text, version + 1)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version + 1),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self, path: Path) -> None:
        del self.buffers[path]
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
        )

    def text(self, path: Path) -> str:
        return self.buffers[path][0]

    # ------------------------------------------------- the server's requests

    async def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.applied_edits.append(params)
        if self.before_apply is not None:
            self.before_apply(params)
        if self.while_applying is not None:
            await self.while_applying(params)
        if self.hold_edits is not None:  # the user is looking at the edit
            await self.hold_edits.wait()
        if not self.apply_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="rejected by the test")
        edit = params.edit
        # versions first: all or nothing, like an editor
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                path = Path(to_fs_path(change.text_document.uri))
                if path in self.buffers and change.text_document.version not in (None, self.buffers[path][1]):
                    return types.ApplyWorkspaceEditResult(
                        applied=False,
                        failure_reason=f"version mismatch: buffer at {self.buffers[path][1]}, edit for {change.text_document.version}",
                    )
        on_disk = []
        edited = []
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                path = Path(to_fs_path(change.text_document.uri))
                if path in self.buffers:
                    text, version = self.buffers[path]
                    new_text = apply_text_edits(text, change.edits)
                    self.buffers[path] = (new_text, version + 1)
                    edited.append(path)
                    self.client.text_document_did_change(
                        types.DidChangeTextDocumentParams(
                            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version + 1),
                            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
                        )
                    )
                    continue
            if isinstance(change, (types.CreateFile, types.RenameFile)):  # editors create missing folders
                target = change.uri if isinstance(change, types.CreateFile) else change.new_uri
                Path(to_fs_path(target)).parent.mkdir(parents=True, exist_ok=True)
            on_disk.append(change)
        apply_workspace_edit(types.WorkspaceEdit(document_changes=on_disk, changes=edit.changes))
        if self.plugin_saves and review_of(params) != "review":
            for path in edited:
                path.write_text(self.buffers[path][0], encoding="utf-8")
                self.plugin_saved.append(path)
        return types.ApplyWorkspaceEditResult(applied=True)

    async def on_permission(self, params: dict) -> dict:
        self.permission_requests.append(params)
        if self.permission_answer == NEVER:
            await self.never.wait()
        return {"answer": self.permission_answer}

    def on_save(self, params: dict) -> dict:
        self.saved.append(params["uris"])
        for uri in params["uris"]:
            path = Path(to_fs_path(uri))
            if path in self.buffers:
                path.write_text(self.buffers[path][0], encoding="utf-8")
        return {}

    async def on_message_request(self, params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        self.show_message_requests.append(params)
        if self.message_answer == NEVER:
            await self.never.wait()
        return types.MessageActionItem(title=self.message_answer)


async def wait_until(predicate: Callable[[], Any], timeout: float = TIMEOUT_S, what: str = "condition") -> Any:
    """Poll `predicate` until it is true (its value is returned); after `timeout` seconds,
    longer while the machine is loaded, fail saying what and how long."""
    started = time.monotonic()
    while True:
        value = predicate()
        if value:
            return value
        waited = time.monotonic() - started
        if waited > timeout and waited > stretched(timeout):
            raise AssertionError(f"timed out waiting for {what} ({waited:.1f} s, load average {_load():.1f})")
        await asyncio.sleep(0.01)


def apply_workspace_edit(edit: types.WorkspaceEdit) -> None:
    """Apply an edit to files on disk, as an editor would to its buffers."""
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            _apply_text_edits(change.text_document.uri, change.edits)
        elif isinstance(change, types.CreateFile):
            path = Path(to_fs_path(change.uri))
            if not path.exists() or (change.options and change.options.overwrite):
                path.write_text("", encoding="utf-8")
        elif isinstance(change, types.RenameFile):
            Path(to_fs_path(change.old_uri)).rename(to_fs_path(change.new_uri))
        elif isinstance(change, types.DeleteFile):
            Path(to_fs_path(change.uri)).unlink()
    for uri, edits in (edit.changes or {}).items():
        _apply_text_edits(uri, edits)


def _apply_text_edits(uri: str, edits: list) -> None:
    path = Path(to_fs_path(uri))
    path.write_text(apply_text_edits(path.read_text(encoding="utf-8") if path.exists() else "", edits), encoding="utf-8")


def apply_text_edits(text: str, edits: list) -> str:
    doc = TextDocument("file:///buffer", text)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(types.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
    return doc.source


def review_of(params: types.ApplyWorkspaceEditParams) -> str | None:
    """The `agentLsp.review` member the server sent with this edit (None: no member)."""
    member = getattr(params, "agent_lsp", None)
    return member.get("review") if isinstance(member, dict) else None


def keep_agent_member(converter: Any) -> None:
    """Structure `workspace/applyEdit` params with their `agentLsp` member kept
    (lsprotocol's class has no room for it, and drops it)."""
    standard = converter.get_structure_hook(types.ApplyWorkspaceEditParams)

    def structure(obj: Any, cls: type) -> AgentApplyEditParams:
        params = standard(obj, cls)
        fields = {f.name: getattr(params, f.name) for f in attrs.fields(types.ApplyWorkspaceEditParams)}
        return AgentApplyEditParams(**fields, agent_lsp=obj.get("agentLsp") if isinstance(obj, dict) else None)

    converter.register_structure_hook(types.ApplyWorkspaceEditParams, structure)


def make_client() -> tuple[LanguageClient, EditorUnderTest]:
    client = LanguageClient(converter_factory=raw_params_converter)
    keep_agent_member(client.protocol._converter)
    features = {m: f for m, f in DEFAULT_CLIENT_FEATURES.items() if m != types.WORKSPACE_CONFIGURATION}
    register_lsp_features(client, features)
    editor = EditorUnderTest(client)

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def on_configuration(params: types.ConfigurationParams):
        editor.configuration_pulls += 1
        return [client.get_configuration(section=item.section, scope_uri=item.scope_uri) for item in params.items]

    def record(method: str):
        def handler(params: dict) -> None:
            editor.notifications.append((method, params))
            if method == "session/event":
                editor.events[params["sessionId"]].extend(params["events"])
            elif method == "agent/status":
                editor.statuses.append((params["sessionId"], params["status"]))

        return handler

    for method in (
        "session/event",
        "agent/status",
        "agent/inbox/inserted",
        "agent/inbox/discarded",
        "agent/inbox/claimed",
        "agent/inbox/changed",
        "agent/error",
        "agent/tool/progress",
        "agent/subagent/status",
        "agent/permission/answered",
    ):
        client.feature(method)(record(method))

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def on_apply_edit(params: types.ApplyWorkspaceEditParams):
        return await editor.on_apply_edit(params)

    @client.feature("agent/permission")
    async def on_permission(params: dict):
        return await editor.on_permission(params)

    @client.feature("agent/saveDocuments")
    def on_save(params: dict):
        return editor.on_save(params)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams):
        editor.registrations += [get_converter().unstructure(r) for r in params.registrations]
        return None

    return client, editor


def client_capabilities(*, agent: bool = True, configuration: bool = True, watch_files: bool = False) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            configuration=configuration,
            workspace_folders=True,
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(dynamic_registration=False),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True) if watch_files else None,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Rename,
                    types.ResourceOperationKind.Delete,
                ],
            ),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
        experimental={"agentLsp": {"permissions": True, "saveDocuments": True, "events": True}} if agent else None,
    )


@asynccontextmanager
async def running_server(
    *,
    folders: list[Path] | None,
    sessions_dir: Path,
    script: list | None = None,
    settings: dict | None = None,
    configuration: dict | None = None,
    agent_capabilities: bool = True,
    configuration_capability: bool = True,
    watch_files: bool = False,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    message_requests: bool = False,
    graceful: bool = True,
) -> AsyncIterator[EditorUnderTest]:
    """Start `python -m agent_lsp.lsp` (or `command`), initialize it, yield the test editor, shut it down.

    `capabilities` replaces the ones made from the flags; `message_requests`: the editor
    answers `window/showMessageRequest` (`message_answer`); `graceful=False`: the test
    ends the server itself (e.g. SIGTERM), only the client is stopped afterwards."""
    client, editor = make_client()
    if message_requests:

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_message_request(params: types.ShowMessageRequestParams):
            return await editor.on_message_request(params)

    server_env = dict(os.environ)
    server_env.pop("AGENT_LSP_SESSIONS_DIR", None)
    server_env["AGENT_LSP_CONFIG"] = str(sessions_dir / "no-user-config.toml")  # the user's file stays out
    server_env["XDG_CACHE_HOME"] = str(sessions_dir.parent / "cache")  # the start-up code cache too
    server_env.update(env or {})
    command = command or [sys.executable, "-m", "agent_lsp.lsp"]
    await client.start_io(*command, env=server_env)
    if configuration is not None:
        client.set_configuration(configuration, section="agentLsp")
    options = {"model": {"provider": "scripted", "script": script or []}, "sessionsDir": str(sessions_dir)}
    options.update(settings or {})
    editor.initialize_result = await answered(
        client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or client_capabilities(agent=agent_capabilities, configuration=configuration_capability,
                                                                 watch_files=watch_files),
                workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders] if folders else None,
                initialization_options=options,
            )
        ),
        "initialize",
    )
    try:
        yield editor
    finally:
        editor.never.set()
        if graceful and not editor.killed:
            await answered(client.shutdown_session(), "shutdown")
        await client.stop()
