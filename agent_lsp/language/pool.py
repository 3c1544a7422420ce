"""The language servers of one workspace folder: started on first use, one per
(server, root), shared by every session of the folder, stopped when idle and
with our server.

A server that cannot start or dies is remembered with its reason: the tools
say it once per turn of asking, and it is not restarted until the settings
change (a server that crashes on the project would crash again).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from agent_lsp.language.client import ServerClient, ServerFailed
from agent_lsp.language.confine import place_server
from agent_lsp.language.specs import Choice, ServerSpec
from agent_lsp.sandbox import SandboxPolicy

log = logging.getLogger(__name__)

IDLE_CHECK_S = 30.0


class ServerPool:
    def __init__(self, workspace: Path, choices: list[Choice], idle_shutdown_s: float = 600.0,
                 sandbox: SandboxPolicy | None = None):
        self.workspace = workspace
        self.choices = choices
        self.idle_shutdown_s = idle_shutdown_s
        self.sandbox = sandbox  # where the servers run (the commands' sandbox); None: unsandboxed
        self._starting: dict[tuple[str, Path], asyncio.Task[ServerClient]] = {}
        self.failures: dict[str, str] = {}  # server name -> why it is not running
        self._idle_task: asyncio.Task | None = None
        self._closed = False

    def usable(self) -> list[Choice]:
        return [c for c in self.choices if c.executable is not None]

    def specs_for(self, path: Path) -> list[Choice]:
        return [c for c in self.usable() if c.spec.serves(path)]

    def running(self) -> list[ServerClient]:
        return [t.result() for t in self._starting.values()
                if t.done() and not t.cancelled() and t.exception() is None and t.result().failure is None]

    def root_for(self, spec: ServerSpec, path: Path) -> Path:
        """The nearest folder at or above `path` with one of the spec's root markers,
        within the workspace; else the workspace folder."""
        for folder in path.parents:
            if folder != self.workspace and self.workspace not in folder.parents:
                break
            if any((folder / marker).exists() for marker in spec.root_markers):
                return folder
        return self.workspace

    async def clients_for(self, path: Path) -> tuple[list[ServerClient], list[str]]:
        """The running servers for `path` (started now if needed), and why others are not."""
        clients, problems = [], []
        for choice in self.specs_for(path):
            try:
                clients.append(await self._client(choice, self.root_for(choice.spec, path)))
            except ServerFailed as error:
                problems.append(str(error))
        return clients, problems

    async def _client(self, choice: Choice, root: Path) -> ServerClient:
        name = choice.spec.name
        if name in self.failures:
            raise ServerFailed(self.failures[name])
        if self._closed:
            raise ServerFailed("the workspace is closing")
        key = (name, root)
        task = self._starting.get(key)
        if task is None:
            task = asyncio.ensure_future(self._start(choice, root))
            self._starting[key] = task
            self._ensure_idle_watch()
        client = await asyncio.shield(task)
        if client.failure is not None:
            self.failures[name] = client.failure
            self._starting.pop(key, None)
            raise ServerFailed(client.failure)
        return client

    async def _start(self, choice: Choice, root: Path) -> ServerClient:
        assert choice.executable is not None
        started = time.monotonic()
        placed = await asyncio.to_thread(place_server, self.sandbox, choice.spec, choice.executable, root, True)
        if placed.placement.refused:
            self.failures[choice.spec.name] = f"{choice.spec.name} {placed.describe()}"
            raise ServerFailed(self.failures[choice.spec.name])
        client = ServerClient(choice.spec, choice.executable, root, placed.argv, placed.describe(),
                              placed.placement.sandboxed)
        try:
            await client.start()
        except ServerFailed as error:
            self.failures[choice.spec.name] = str(error)
            raise
        log.info("started %s for %s in %.0f ms (%s)", choice.spec.name, root, (time.monotonic() - started) * 1000,
                 client.placement)
        return client

    def _ensure_idle_watch(self) -> None:
        if self._idle_task is None or self._idle_task.done():
            self._idle_task = asyncio.ensure_future(self._stop_idle())

    async def _stop_idle(self) -> None:
        while self._starting and not self._closed:
            await asyncio.sleep(min(IDLE_CHECK_S, self.idle_shutdown_s))
            now = time.monotonic()
            for key, task in list(self._starting.items()):
                if not task.done() or task.cancelled() or task.exception() is not None:
                    continue
                client = task.result()
                if now - client.last_used >= self.idle_shutdown_s:
                    log.info("stopping %s for %s: idle", client.spec.name, client.root)
                    del self._starting[key]
                    await client.stop()

    async def close(self) -> None:
        self._closed = True
        if self._idle_task is not None:
            self._idle_task.cancel()
        tasks, self._starting = list(self._starting.values()), {}
        for task in tasks:
            if not task.done():
                task.cancel()
        for task in tasks:
            try:
                client = await task
            except (Exception, asyncio.CancelledError):
                continue
            await client.stop()
