"""A folder's session listing and search index, brought up to date in the
background soon after a server opens the folder.

A fresh server knows nothing of the folder's history: its first listing reads
the summary of every session file that changed since any server last listed
them, and its first search indexes the text of every file that grew. For a
history of hundreds of sessions written by an older version, or whose index
file was deleted, that is a second or two, paid by the first picker or search
the user opens. So a server does it itself, on a worker thread, a moment after
it opened the folder (the delay leaves the start and the first session the
machine to themselves). A listing or search that comes meanwhile waits for
the part it needs (the store's and the index's locks) and then finds it done;
one that comes later costs what the files gained since.

Only the servers do this (the LSP and ACP faces); a one-shot command that
lists once would gain nothing by it.
"""

from __future__ import annotations

import asyncio
import logging

from agent_lsp.store import SessionStore

log = logging.getLogger(__name__)

DELAY_S = 1.0


class ListingWarmUp:
    def __init__(self, store: SessionStore):
        self._store = store
        self._task: asyncio.Task | None = None
        self._running = False  # on the worker thread: close waits for it rather than leave it half done

    def start(self, delay_s: float = DELAY_S) -> None:
        """From the server's event loop (a no-op anywhere else, and when started already)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._task is None:
            self._task = loop.create_task(self._run(delay_s))

    async def _run(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        self._running = True
        try:
            await asyncio.to_thread(self._store.prepare_search)
        except Exception:  # derived data: the first listing or search reads the files itself
            log.exception("bringing the session listing of %s up to date", self._store.directory)
        finally:
            self._running = False

    async def stop(self) -> None:
        """Before the store closes: cancelled if it has not begun, else awaited
        (a thread cannot be stopped; the loop goes on meanwhile)."""
        task, self._task = self._task, None
        if task is None:
            return
        if not self._running:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
