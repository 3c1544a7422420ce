"""A test editor: the real server as a subprocess, driven by pytest-lsp's client.

The client records every notification, applies `workspace/applyEdit` to the
files on disk (as the headless client and editors do), answers
`agent/permission` and `agent/saveDocuments`, and offers `wait_*` helpers that
poll with a deadline (no fixed sleeps).
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
from typing import Any, AsyncIterator, Callable

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from agent_lsp.lsp.language_server import raw_params_converter

TIMEOUT_S = 10.0


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
        return await asyncio.wait_for(self.client.protocol.send_request_async(method, params), TIMEOUT_S)

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
        return await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT_S)

    async def command(self, name: str, *arguments: Any) -> Any:
        return await asyncio.wait_for(
            self.client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(arguments))),
            TIMEOUT_S,
        )

    # ------------------------------------------------------------- waiting

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = TIMEOUT_S, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.01)

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
    doc = TextDocument(uri, path.read_text(encoding="utf-8") if path.exists() else "")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(types.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
    path.write_text(doc.source, encoding="utf-8")


def make_client() -> tuple[LanguageClient, EditorUnderTest]:
    client = LanguageClient(converter_factory=raw_params_converter)
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
    ):
        client.feature(method)(record(method))

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def on_apply_edit(params: types.ApplyWorkspaceEditParams):
        editor.applied_edits.append(params)
        if editor.hold_edits is not None:  # the user is looking at the edit
            await editor.hold_edits.wait()
        if not editor.apply_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="rejected by the test")
        apply_workspace_edit(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature("agent/permission")
    def on_permission(params: dict):
        editor.permission_requests.append(params)
        return {"answer": editor.permission_answer}

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams):
        editor.registrations += [get_converter().unstructure(r) for r in params.registrations]
        return None

    @client.feature("agent/saveDocuments")
    def on_save(params: dict):
        editor.saved.append(params["uris"])
        return {}

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
) -> AsyncIterator[EditorUnderTest]:
    """Start `python -m agent_lsp.lsp` (or `command`), initialize it, yield the test editor, shut it down."""
    client, editor = make_client()
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
    editor.initialize_result = await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(agent=agent_capabilities, configuration=configuration_capability,
                                                 watch_files=watch_files),
                workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders] if folders else None,
                initialization_options=options,
            )
        ),
        TIMEOUT_S,
    )
    try:
        yield editor
    finally:
        if not editor.killed:
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT_S)
        await client.stop()
