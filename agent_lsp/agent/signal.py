"""Cancellation of one activity (a driver run or a maintenance task).

One token per activity, first cause wins (R7). The token is the
`AbortSignal` handed to hooks, providers and tools: they read `aborted` and
`reason`, or `await signal.wait()`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

log = logging.getLogger(__name__)

CAUSE_KINDS = ("user", "parent", "hook", "disposed", "legacy")


def normalize_cause(cause: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(cause, str):
        if cause not in CAUSE_KINDS:
            return {"kind": "hook", "reason": cause}
        return {"kind": cause}
    if isinstance(cause, dict) and cause.get("kind") in CAUSE_KINDS:
        return dict(cause)
    raise ValueError(f"invalid cancel cause: {cause!r}")


class Aborted(Exception):
    """Raised inside the loop when the activity's token is aborted."""

    def __init__(self, cause: dict[str, Any] | None):
        self.cause = cause or {"kind": "user"}
        super().__init__(f"aborted: {self.cause}")


class CancelToken:
    __slots__ = ("_reason", "_event", "_callbacks")

    def __init__(self) -> None:
        self._reason: dict[str, Any] | None = None
        self._event: asyncio.Event | None = None
        self._callbacks: list[Callable[[dict[str, Any]], Any]] = []

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> dict[str, Any] | None:
        return self._reason

    def abort(self, cause: dict[str, Any]) -> bool:
        """Abort with `cause`; a later cause never replaces the first."""
        if self._reason is not None:
            return False
        self._reason = cause
        if self._event is not None:
            self._event.set()
        for fn in tuple(self._callbacks):
            try:
                fn(cause)
            except Exception:
                log.exception("abort observer failed")
        return True

    def on_abort(self, fn: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        self._callbacks.append(fn)
        return lambda: self._callbacks.remove(fn) if fn in self._callbacks else None

    async def wait(self) -> None:
        if self._reason is not None:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def raise_if_aborted(self) -> None:
        if self._reason is not None:
            raise Aborted(self._reason)
