"""The agent's tools through the real server (subprocess): tests/lsp/lsp_harness.py's
editor, started with the capabilities a tool test chooses (resource operations, the
agentLsp extensions, window/showDocument), and helpers to run a scripted turn."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from lsprotocol import types

from lsp_harness import NEVER, EditorUnderTest, review_of, running_server, wait_until  # noqa: F401 (used by the tests)

AGENT_PLUGIN = {"permissions": True, "saveDocuments": True, "events": True}  # what our plugins declare
BufferEditor = EditorUnderTest  # the tool tests' name for the test editor


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
    async with running_server(
        folders=folders,
        sessions_dir=sessions_dir,
        settings=settings,
        env=env,
        command=[sys.executable, "-m", "agent_lsp.lsp", *server_args],
        capabilities=capabilities(resource_operations=resource_operations, agent=agent, show_document=show_document),
        message_requests=True,
        graceful=graceful,
    ) as editor:
        yield editor


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
