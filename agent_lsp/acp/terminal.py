"""run_command in the client's terminal, when the client offers terminals.

The command is asked about exactly as the built-in tool asks (same permission
request, same policy), then runs as `bash -c COMMAND` in a terminal the client
creates (`terminal/create`), so the user watches it in the editor; the tool
call shows that terminal while it runs. Its output and exit code are the
tool's result, as with the built-in runner; a timeout or a cancel kills it.
The terminal is released when the call ends. The command runs where the client
runs it, outside the agent's sandbox, and the question says so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

from acp import tool_terminal_ref, update_tool_call

from agent_lsp.agent.ports import PermissionRequest, ToolContext, ToolOutput
from agent_lsp.tools.base import ToolError, error_output, unless_aborted
from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots
from agent_lsp.tools.shell import RunCommandInput

OUTPUT_BYTE_LIMIT = 200_000


async def run_in_terminal(connection: Any, session_id: str, call_id: str, args: RunCommandInput, root: Path,
                          authorize: Callable[[PermissionRequest], Awaitable[Any]], ctx: ToolContext,
                          show: Callable[[Any], None]) -> ToolOutput:
    roots = WorkspaceRoots([root])
    try:
        cwd = roots.resolve(args.cwd) if args.cwd and args.cwd.strip() else root
    except OutsideWorkspaceError as e:
        return error_output(str(e), "OUTSIDE_WORKSPACE")
    if not cwd.is_dir():
        return error_output(f"cwd '{roots.display(cwd)}' is not a folder", "NOT_A_DIRECTORY")
    if not args.command.strip():
        return error_output("empty command", "BAD_COMMAND")
    shown_cwd = roots.display(cwd)
    where = " (not sandboxed: it runs in the client's terminal)"  # docs/sandbox.md
    request = PermissionRequest(tool="run_command", title=f"Run `{args.command}`" + ("" if shown_cwd == "." else f" in {shown_cwd}") + where,
                                kind="command", command=args.command, detail=args.command, session_id=session_id)
    try:
        verdict = await unless_aborted(ctx, authorize(request),
                                       f"The turn was cancelled while waiting for permission ({request.title}); nothing was done.")
    except ToolError as e:
        return error_output(e.message, e.code)
    if not verdict.allowed:
        return error_output(f"Permission denied: {request.title}. {verdict.reason}".strip(), "PERMISSION_DENIED")

    created = await connection.create_terminal(session_id=session_id, command="bash", args=["-c", args.command],
                                               cwd=str(cwd), output_byte_limit=OUTPUT_BYTE_LIMIT)
    terminal_id = created.terminal_id
    show(update_tool_call(call_id, status="in_progress", content=[tool_terminal_ref(terminal_id)]))
    outcome = "exited"
    try:
        exited = asyncio.ensure_future(connection.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id))
        aborted = asyncio.ensure_future(ctx.signal.wait())
        done, _ = await asyncio.wait({exited, aborted}, timeout=args.timeout_seconds, return_when=asyncio.FIRST_COMPLETED)
        if exited not in done:
            outcome = "cancelled" if aborted in done else "timeout"
            await connection.kill_terminal(session_id=session_id, terminal_id=terminal_id)
            exited.cancel()
        aborted.cancel()
        output = await connection.terminal_output(session_id=session_id, terminal_id=terminal_id)
    finally:
        await asyncio.shield(connection.release_terminal(session_id=session_id, terminal_id=terminal_id))
    text = output.output + ("" if output.output.endswith("\n") or not output.output else "\n")
    if output.truncated:
        text = "[the beginning of the output was cut]\n" + text
    code = output.exit_status.exit_code if output.exit_status else None
    meta = {"exitCode": code, "outcome": outcome, "terminal": True}
    if outcome == "timeout":
        return error_output(f"{text}[timed out after {args.timeout_seconds:g} s; the command was killed]", "TIMEOUT", meta)
    if outcome == "cancelled":
        return error_output(f"{text}[cancelled; the command was killed]", "ABORTED", meta)
    return ToolOutput(content=(text or "(no output)\n") + f"[exit code {code}]", meta=meta)
