"""Reading lines from stdin without blocking the event loop or the exit.

A read runs on a daemon thread, so a prompt nobody answers never keeps the
process alive, and a read abandoned by a cancel is picked up by the next
`readline()` instead of swallowing a line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from typing import TextIO


class LineReader:
    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdin
        self._pending: concurrent.futures.Future[str] | None = None

    async def readline(self) -> str:
        """The next line, with its newline; "" at end of input."""
        if self._pending is None:
            pending: concurrent.futures.Future[str] = concurrent.futures.Future()

            def read() -> None:
                try:
                    pending.set_result(self.stream.readline())
                except BaseException as error:  # noqa: BLE001 - handed to the awaiting side
                    pending.set_exception(error)

            threading.Thread(target=read, name="agent-lsp-stdin", daemon=True).start()
            self._pending = pending
        line = await asyncio.shield(asyncio.wrap_future(self._pending))
        self._pending = None
        return line

    def isatty(self) -> bool:
        try:
            return self.stream.isatty()
        except (AttributeError, ValueError):
            return False
