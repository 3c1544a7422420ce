"""Asking a model server for its context window in the background, once per
server and model and process (llm/discovery.py says where each kind of
server tells it), for both the OpenAI-compatible and the Anthropic provider.

`soon(model)` starts the probe as a session starts; `within(model, wait_s)`
waits for it a bounded time (the first request waits at most
`FIRST_REQUEST_WAIT_S`, shared with the agent's check before its step) and
answers (the window or None, whether the probe is still under way). An
answer is kept for the process, so a later session, or a request after the
first, never probes on its path.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Callable, Mapping

from . import models
from .discovery import discover_context_window
from .types import ModelInfo

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

# Context windows servers told us, by (base URL, model): every session has its own provider.
_DISCOVERED: dict[tuple[str, str], int | None] = {}
# Probes under way, by (base URL, model): started in the background, joined by whoever needs the answer.
_PENDING: dict[tuple[str, str], "asyncio.Task[int | None]"] = {}
# The first request waits this long for a probe under way; then it goes with what is known.
FIRST_REQUEST_WAIT_S = 0.2


class WindowProbe:
    def __init__(self, base_url: str, client: Callable[[], "httpx.AsyncClient"], headers: Mapping[str, str],
                 *, enabled: bool):
        """`base_url` is the OpenAI-style one (ending in /v1 for the servers that
        have it); `client` makes or gives the provider's pooled HTTP client."""
        self.base_url = base_url
        self._client = client
        self._headers = dict(headers)
        self.enabled = enabled
        self._known: dict[str, int | None] = {}  # model -> the window the server reported
        self._wait_until: dict[str, float] = {}  # model -> until when requests wait for its probe

    def known(self, model: str) -> int | None:
        return self._known.get(model)

    def soon(self, model: str) -> "asyncio.Task[int | None] | None":
        """Start asking, unless asked already (this process) or not to ask. The probe under way, or None."""
        if not self.enabled or model in self._known:
            return None
        key = (self.base_url, model)
        if key in _DISCOVERED:  # asked already, by another session's provider
            self._known[model] = _DISCOVERED[key]
            return None
        task = _PENDING.get(key)
        if task is None:
            task = _PENDING[key] = asyncio.ensure_future(self._probe(key, model))
        return task

    async def _probe(self, key: tuple[str, str], model: str) -> int | None:
        try:
            _DISCOVERED[key] = window = await discover_context_window(self._client(), self.base_url, model,
                                                                      self._headers)
            return window
        except Exception:  # e.g. the provider was closed meanwhile: not an answer, ask again later
            log.debug("asking %s for the context window failed", self.base_url, exc_info=True)
            return None
        finally:
            _PENDING.pop(key, None)

    async def within(self, model: str, wait_s: float, *, shared: bool = True) -> tuple[int | None, bool]:
        """(the window the server reported for `model`, whether a probe is still
        under way), waiting at most `wait_s` for the probe; a `shared` wait counts
        from the first wait for it, so the agent's check before a step and the
        request share one wait."""
        task = self.soon(model)
        if task is not None and wait_s > 0 and shared:
            loop = asyncio.get_running_loop()
            deadline = self._wait_until.setdefault(model, loop.time() + wait_s)
            wait_s = min(wait_s, deadline - loop.time())
        if task is not None and wait_s > 0:
            # The HTTP client (httpx's import, the TLS context) is made first: the
            # request needs it anyway, and the wait is for the server, not for us.
            self._client()
            try:
                await asyncio.wait_for(asyncio.shield(task), wait_s)
            except (asyncio.TimeoutError, TimeoutError):
                pass
            except Exception:  # a failed probe is just "not known"
                pass
        key = (self.base_url, model)
        if key in _DISCOVERED:
            self._known[model] = _DISCOVERED[key]
        return self._known.get(model), key in _PENDING


class ProbedWindows:
    """What both HTTP providers answer about a model's window: the configured one,
    else what their server said (`windows`, a WindowProbe they make with their own
    client and headers)."""

    windows: WindowProbe
    _context_window: int | None
    _max_output_tokens: int | None

    def model_info(self, model: str) -> ModelInfo:
        return models.model_info(
            model, context_window=self._context_window or self.windows.known(model),
            max_output_tokens=self._max_output_tokens,
        )

    def discover_soon(self, model: str) -> "asyncio.Task[int | None] | None":
        """Start asking the server for `model`'s window in the background."""
        return self.windows.soon(model)

    async def context_window_within(self, model: str, wait_s: float, *, shared: bool = True
                                    ) -> tuple[int | None, bool]:
        """(the context window of `model`, whether the server is still being asked), waiting at most `wait_s`."""
        _, pending = await self.windows.within(model, wait_s, shared=shared)
        return self.model_info(model).context_window, pending
