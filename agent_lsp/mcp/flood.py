"""What an MCP server sends unasked is bounded by what it changes, not by how
often it says so.

A server may announce `notifications/tools/list_changed` thousands of times in
a row, or report progress thousands of times a second. Each announcement
would cost a `tools/list` round trip and a rebuild of the agent's tools, each
progress report a notification to the client. So:

- `Coalesced` runs one refresh at a time: announcements while one runs ask for
  one more after it, however many they are;
- `throttled_progress` passes on the first few progress reports, then at
  most one per interval (and always the one where the server says it is
  done); the ones in between are dropped: the next says where it is then.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable

PROGRESS_INTERVAL_S = 0.1  # one report per interval passes on, after a burst
PROGRESS_BURST = 10


class Coalesced:
    """`request()` runs `refresh` now, or once more after the run in progress."""

    def __init__(self, refresh: Callable[[], Awaitable[None]]):
        self._refresh = refresh
        self._task: asyncio.Task | None = None
        self._again = False

    def request(self) -> None:
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            self._again = False
            await self._refresh()
            if not self._again:
                return


def throttled_progress(report: Callable[[float, float | None, str | None], Awaitable[None]],
                       interval_s: float = PROGRESS_INTERVAL_S, burst: int = PROGRESS_BURST
                       ) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    tokens, last = [float(burst)], [time.monotonic()]

    async def throttled(progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        tokens[0] = min(float(burst), tokens[0] + (now - last[0]) / interval_s)
        last[0] = now
        done = total is not None and progress >= total
        if tokens[0] < 1 and not done:
            return  # the next one that gets through says where it is then
        tokens[0] = max(0.0, tokens[0] - 1)
        await report(progress, total, message)

    return throttled
