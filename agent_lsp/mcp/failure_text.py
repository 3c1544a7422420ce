"""How an MCP server or request fails: `ServerUnavailable` (the server is not
connected), what a failure says: the reason a connection ended (with the tail
of a stdio server's stderr) and the message of a failed request."""

from __future__ import annotations

import asyncio
from typing import Any


class ServerUnavailable(Exception):
    """The server is not connected (not started, failed, restarting)."""


STDERR_TAIL = 600  # characters of the server's stderr kept for the failure reason


def error_text(error: BaseException) -> str:
    """What a failed request says: the server's JSON-RPC error message (the SDK's MCPError), else the exception."""
    return getattr(getattr(error, "error", None), "message", None) or str(error) or type(error).__name__


def describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        inner = [e for e in error.exceptions if not isinstance(e, asyncio.CancelledError)]
        if inner:
            return describe(inner[0])
    if isinstance(error, FileNotFoundError):
        return f"command not found: {error.filename or error}"
    text = str(error).strip()
    name = type(error).__name__
    return f"{name}: {text}" if text and name not in ("MCPError", "ServerUnavailable", "SignInFailed") else (text or name)


def with_stderr(reason: str, errlog: Any) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        tail = errlog.read()[-STDERR_TAIL:].strip()
    except (OSError, ValueError):
        tail = ""
    return f"{reason}; stderr: {tail}" if tail else reason
