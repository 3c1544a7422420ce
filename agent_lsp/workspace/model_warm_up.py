"""The first model request of a process as fast as the next: what it would
otherwise do on its path is done in the background once a server opens a
folder.

- On a worker thread: the HTTP transport's imports (httpx, the configured
  provider's module) and the TLS context (llm/transport.py `prepare`).
- Then, on the event loop: the configured model's provider is made and the
  model server is asked its context window (llm/window_probe.py); the answer
  is kept for the process, so the first session's first request finds it and
  does not wait for the probe. With a base URL and no model name set, the
  endpoint is asked its models too (workspace/endpoint_model.py).

Nothing here is needed: a failure is logged at debug level and the first
request does what is left itself. The scripted provider has nothing to warm.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from typing import Any, Callable

log = logging.getLogger(__name__)

_MODULES = {"openai": "agent_lsp.llm.openai", "anthropic": "agent_lsp.llm.anthropic"}


def _prepare_transport(provider: str) -> None:
    modules = [_MODULES[provider]] if provider in _MODULES else list(_MODULES.values())
    for name in ("agent_lsp.llm.factory", *modules):
        importlib.import_module(name)
    importlib.import_module("agent_lsp.llm.transport").prepare()


class ModelWarmUp:
    def __init__(self, provider: Callable[[], str], resolve: Callable[[], Any],
                 list_models: Callable[[], Any] = lambda: None):
        """`provider`: the configured provider's name ("auto" when chosen by the
        environment); `resolve`: the configured model, as the host resolves it;
        `list_models`: starts asking the endpoint its models, where that is needed."""
        self._provider = provider
        self._resolve = resolve
        self._list_models = list_models
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """From the server's event loop (a no-op anywhere else, and when started already)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._task is None and self._provider() != "scripted":
            self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        resolved = None
        try:
            await asyncio.to_thread(_prepare_transport, self._provider())
            self._list_models()
            resolved = self._resolve()
            if resolved.provider_name == "scripted":
                return
            soon = getattr(resolved.provider, "discover_soon", None)
            probe = soon(resolved.model) if soon is not None else None
            if probe is not None:
                await asyncio.wait({probe})  # not cancelled with this task: a session may be waiting on it
        except Exception as error:  # the first request does it itself, and says what is wrong
            log.debug("warming up the model provider: %s", error)
        finally:
            close = getattr(getattr(resolved, "provider", None), "aclose", None)
            if close is not None:
                await close()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
