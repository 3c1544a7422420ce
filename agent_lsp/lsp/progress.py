"""Agent status as standard work-done progress (`$/progress`), for every editor.

While a session runs, the server shows a cancellable progress ("agent-lsp:
working"); the editor's cancel button maps to `agent/cancel`. Created only
when the client declared `window.workDoneProgress`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class _SessionProgress:
    def __init__(self, token: str):
        self.token = token
        self.begun = False
        self.ended = False


class ProgressReporter:
    def __init__(self, server: LanguageServer, spawn: Callable[[object], None]):
        self.server = server
        self.spawn = spawn  # runs a coroutine as a tracked background task
        self._active: dict[str, _SessionProgress] = {}
        self._counter = itertools.count(1)

    @property
    def supported(self) -> bool:
        caps = self.server.client_capabilities
        return bool(caps and caps.window and caps.window.work_done_progress)

    def running(self, session_id: str, title: str, on_cancel: Callable[[], None]) -> None:
        if not self.supported or session_id in self._active:
            return
        progress = _SessionProgress(f"agent-lsp/{session_id}/{next(self._counter)}")
        self._active[session_id] = progress
        self.spawn(self._begin(progress, title, on_cancel))

    async def _begin(self, progress: _SessionProgress, title: str, on_cancel: Callable[[], None]) -> None:
        wdp = self.server.work_done_progress
        try:
            await asyncio.shield(
                self.server.protocol.send_request_async(
                    types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WorkDoneProgressCreateParams(token=progress.token)
                )
            )
        except Exception as error:
            log.debug("progress create refused: %s", error)
            return
        if progress.ended:
            return  # the turn finished while the client was answering
        wdp.begin(progress.token, types.WorkDoneProgressBegin(title=title, cancellable=True))
        progress.begun = True
        loop = asyncio.get_running_loop()

        def cancelled(future) -> None:
            if future.cancelled() and not progress.ended:
                loop.call_soon_threadsafe(on_cancel)

        wdp.tokens[progress.token].add_done_callback(cancelled)

    def report(self, session_id: str, message: str) -> None:
        """A one-line update of the running session's progress (e.g. the tool it runs)."""
        progress = self._active.get(session_id)
        if progress is not None and progress.begun and not progress.ended:
            self.server.work_done_progress.report(progress.token, types.WorkDoneProgressReport(message=message))

    def idle(self, session_id: str, message: str = "done") -> None:
        progress = self._active.pop(session_id, None)
        if progress is None:
            return
        progress.ended = True
        if progress.begun:
            self.server.work_done_progress.end(progress.token, types.WorkDoneProgressEnd(message=message))
        future = self.server.work_done_progress.tokens.pop(progress.token, None)
        if future is not None and not future.done():
            future.set_result(None)
