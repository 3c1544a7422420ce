"""What the ACP face does around each tool call of an agent: the call's session,
id and tool made current (acp/client_editor.py reads them), the client's text of
the file a file tool names fetched first, and `run_command` run in the client's
terminal when the client has one (acp/terminal.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from agent_lsp.acp.client_editor import AcpEditor, current_call, current_session, current_tool
from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost


FILE_TOOLS = frozenset({"read_file", "edit_file", "write_file"})


def around_tool_hook(agent: Agent, host: WorkspaceHost, editor: AcpEditor,
                     use_terminal: Callable[[], bool], in_terminal: Callable[[dict[str, Any]], Awaitable[Any]]
                     ) -> Callable[..., Any]:
    """The agent's `tools/execute` hook; `in_terminal(payload)` runs a command in
    the client's terminal, used while `use_terminal()`."""

    async def around_tool(payload: dict[str, Any], next_: Any) -> Any:
        session_token = current_session.set(agent.session_id)
        call_token = current_call.set(payload.get("callId"))
        tool_token = current_tool.set((payload.get("name"), payload.get("arguments")))
        path = None
        if payload.get("name") in FILE_TOOLS:
            raw = getattr(payload.get("arguments"), "path", None)
            try:
                path = _resolve(host, raw)
            except OutsideWorkspaceError:
                path = None  # the tool reports it
        try:
            if path is not None:
                await editor.prefetch(agent.session_id, path)
            if payload.get("name") == "run_command" and use_terminal():
                return await in_terminal(payload)
            return await next_(payload)
        finally:
            if path is not None:
                editor.release(path)
            current_tool.reset(tool_token)
            current_call.reset(call_token)
            current_session.reset(session_token)

    return around_tool


def _resolve(host: WorkspaceHost, raw: Any) -> Path | None:
    if not isinstance(raw, str) or not raw:
        return None
    return WorkspaceRoots([host.root]).resolve(raw)
