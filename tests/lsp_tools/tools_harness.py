"""An editor with buffers, driving the real server (subprocess) to test the agent's tools.

Built on tests/lsp/lsp_harness.py. On top of it, this editor:
- keeps open buffers with versions (`open`, `type`) and tells the server (didOpen/didChange);
- applies `workspace/applyEdit` like a real editor: to the open buffer when the file is
  open (version-checked: an edit computed on an older version is refused), else on disk;
- writes buffers to disk on `agent/saveDocuments`;
- lets a test type into a buffer just before an edit lands (`before_apply`), do
  something while an edit is on its way (`while_applying`, e.g. change a setting),
  hold edits, and choose how permission questions are answered (an answer, or never);
- saves an applied edit's buffers itself unless its `agentLsp.review` is "review",
  as our VS Code and Neovim plugins do, when `plugin_saves` is set.
Capabilities are chosen per server: resource operations, the agentLsp extensions.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import attrs
from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from agent_lsp.lsp.apply_edit_params import AgentApplyEditParams
from lsp_harness import TIMEOUT_S, EditorUnderTest, apply_workspace_edit, make_client

NEVER = "never"  # a permission answer: the editor never answers
AGENT_PLUGIN = {"permissions": True, "saveDocuments": True, "events": True}  # what our plugins declare


class BufferEditor:
    def __init__(self, base: EditorUnderTest):
        self.base = base
        self.client = base.client
        self.buffers: dict[Path, tuple[str, int]] = {}
        self.before_apply: Callable[[types.ApplyWorkspaceEditParams], None] | None = None
        self.while_applying: Callable[[types.ApplyWorkspaceEditParams], Awaitable[None]] | None = None
        self.plugin_saves = False
        self.plugin_saved: list[Path] = []  # buffers written after an applied edit, as a plugin does
        self.show_message_requests: list[types.ShowMessageRequestParams] = []
        self.message_answer = "Allow once"
        self.server_pid: int | None = None

    def __getattr__(self, name: str) -> Any:  # requests, waiting, recorded notifications
        return getattr(self.__dict__["base"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        # the base editor's knobs (permission_answer, apply_edits, hold_edits) are set on it
        base = self.__dict__.get("base")
        if base is not None and name not in self.__dict__ and hasattr(base, name):
            setattr(base, name, value)
        else:
            object.__setattr__(self, name, value)

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

    # ---------------------------------------------------------------- edits

    async def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.base.applied_edits.append(params)
        if self.before_apply is not None:
            self.before_apply(params)
        if self.while_applying is not None:
            await self.while_applying(params)
        if self.base.hold_edits is not None:
            await self.base.hold_edits.wait()
        if not self.base.apply_edits:
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


def apply_text_edits(text: str, edits: list) -> str:
    doc = TextDocument("file:///buffer", text)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(types.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
    return doc.source


def capabilities(*, resource_operations: bool, agent: dict[str, bool] | None, show_document: bool = False) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            configuration=True,
            workspace_folders=True,
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(dynamic_registration=False),
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Rename,
                    types.ResourceOperationKind.Delete,
                ]
                if resource_operations
                else None,
            ),
        ),
        window=types.WindowClientCapabilities(
            work_done_progress=True,
            show_document=types.ShowDocumentClientCapabilities(support=True) if show_document else None,
        ),
        experimental={"agentLsp": agent} if agent is not None else None,
    )


@asynccontextmanager
async def tool_server(
    *,
    folders: list[Path],
    sessions_dir: Path,
    resource_operations: bool = True,
    agent: dict[str, bool] | None = AGENT_PLUGIN,
    settings: dict | None = None,
    env: dict[str, str] | None = None,
    graceful: bool = True,
    show_document: bool = False,
    server_args: tuple[str, ...] = (),
) -> AsyncIterator[BufferEditor]:
    """Start `python -m agent_lsp.lsp` with this editor as its client.

    `agent`: the experimental.agentLsp capabilities (default: what our plugins
    declare; None: a generic editor). `graceful=False`: the test ends the
    server itself (e.g. SIGTERM); only the client is stopped afterwards.
    `show_document`: declare `window.showDocument` (the test answers it);
    `server_args`: e.g. `("--log-file", path)`."""
    client, base = make_client()
    keep_agent_member(client.protocol._converter)
    editor = BufferEditor(base)
    # our buffer-aware applyEdit replaces the harness's disk-only one
    client.protocol.fm._features.pop(types.WORKSPACE_APPLY_EDIT, None)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def on_apply_edit(params: types.ApplyWorkspaceEditParams):
        return await editor.on_apply_edit(params)

    client.protocol.fm._features.pop("agent/permission", None)
    client.protocol.fm._features.pop("agent/saveDocuments", None)
    never = asyncio.Event()

    @client.feature("agent/permission")
    async def on_permission(params: dict):
        base.permission_requests.append(params)
        if base.permission_answer == NEVER:
            await never.wait()
        return {"answer": base.permission_answer}

    @client.feature("agent/saveDocuments")
    def on_save(params: dict):
        base.saved.append(params["uris"])
        for uri in params["uris"]:
            path = Path(to_fs_path(uri))
            if path in editor.buffers:
                path.write_text(editor.buffers[path][0], encoding="utf-8")
        return {}

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_message_request(params: types.ShowMessageRequestParams):
        editor.show_message_requests.append(params)
        if editor.message_answer == NEVER:
            await never.wait()
        return types.MessageActionItem(title=editor.message_answer)

    server_env = dict(os.environ)
    server_env.pop("AGENT_LSP_SESSIONS_DIR", None)
    server_env["AGENT_LSP_CONFIG"] = str(sessions_dir / "no-user-config.toml")
    server_env["XDG_CACHE_HOME"] = str(sessions_dir.parent / "cache")
    server_env.update(env or {})
    await client.start_io(sys.executable, "-m", "agent_lsp.lsp", *server_args, env=server_env)
    editor.server_pid = client._server.pid if client._server else None
    options = {"model": {"provider": "scripted", "script": []}, "sessionsDir": str(sessions_dir)}
    options.update(settings or {})
    base.initialize_result = await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities(resource_operations=resource_operations, agent=agent, show_document=show_document),
                workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
                initialization_options=options,
            )
        ),
        TIMEOUT_S,
    )
    try:
        yield editor
    finally:
        never.set()
        if graceful:
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT_S)
        await client.stop()


# ------------------------------------------------------------------ turns


async def run_turn(editor: BufferEditor, script: list, content: str = "go", session_id: str | None = None) -> tuple[str, list[dict]]:
    """Run one turn with this scripted model; the session id and the turn's tool results' data."""
    editor.use_script(script)
    before = len(editor.statuses)
    params: dict[str, Any] = {"content": content}
    if session_id:
        params["sessionId"] = session_id
    sid = (await editor.request("agent/followup", params))["sessionId"]
    seen = len(editor.events[sid]) if session_id else 0
    await editor.wait_idle(sid, before)
    await editor.wait_for(lambda: editor.event_types(sid)[-1:] == ["turn/end"], what="turn/end")
    results = [e["data"] for e in editor.events[sid][seen:] if e["type"] == "tool/result"]
    return sid, results


def call(name: str, **arguments: Any) -> dict:
    """One model step calling one tool."""
    return {"tools": [{"name": name, "arguments": arguments}]}


def text_of(result: dict) -> str:
    return "".join(block.get("text", "") for block in result["message"]["content"])


def is_error(result: dict) -> bool:
    return bool(result["message"]["isError"])


def error_code(result: dict) -> str | None:
    return (result.get("error") or {}).get("code")


async def wait_until(predicate: Callable[[], Any], timeout: float = TIMEOUT_S, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
