"""The context window of each route (provider, model), as compaction knows it (R10).

Known from the provider (the `model.contextWindow` setting, what a local
server said, the table of well-known models), or learned from a rejection:
the window the server named (llama.cpp's `n_ctx`), else a guess below the
rejected request's size. A provider that asks its server for the window
(`discover_soon`, `context_window_within`) is asked as the agent is built,
and a route's first step waits for the answer at most `DISCOVERY_WAIT_S`;
while it is still coming, `PENDING_WINDOW` stands in. What the stand-in
would change for the session (the tool set, a compaction) may wait longer,
`PROBE_WAIT_S` at most for a route in all: a slow or hanging server never
holds the first request back longer, and its answer, once in, serves the
next step.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from agent_lsp.agent.context_budget import output_reserve

if TYPE_CHECKING:
    from agent_lsp.agent.handle import AgentHandle

log = logging.getLogger(__name__)

OVERFLOW_AIM = 0.9  # with no window named, a rejected request's size times this is taken as the window
DISCOVERY_WAIT_S = 0.2  # the first step of a route waits this long for the server to say its window
PENDING_WINDOW = 8192  # the window reckoned with while the server's answer is still coming
# How long, in all, a route's steps wait beyond that for the real window where the
# stand-in would change the session (the tool set chosen, a compaction): the first
# request goes out within DISCOVERY_WAIT_S + PROBE_WAIT_S of a hanging server.
PROBE_WAIT_S = 1.0

Route = tuple[str, str]


class ContextWindows:
    def __init__(self, agent: "AgentHandle"):
        self.agent = agent
        self.learned: dict[Route, int] = {}  # windows the server's rejections taught
        self.refused: dict[Route, int] = {}  # a rejected size, where the window is only a guess from it
        self._asked: set[Route] = set()  # routes whose server was waited for once
        self._longer_until: dict[Route, float] = {}  # until when a route's longer waits may go
        self._warned: set[Route] = set()

    def ask_soon(self) -> None:
        """Start asking the model server for its window now, in the background,
        so the first step knows it (providers that can ask; a running loop only)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        options = self.agent.options
        soon = getattr(self.agent.providers.get(options.provider), "discover_soon", None)
        if soon is not None:
            try:
                soon(options.model)
            except Exception:
                log.debug("could not start asking for the context window", exc_info=True)

    def known(self, route: Route) -> int | None:
        known = self.agent.context_window(*route)
        learned = self.learned.get(route)
        if known and learned:
            return min(known, learned)  # the server's own refusal wins
        return known or learned

    async def now(self, route: Route, wait: float | None = None) -> tuple[int | None, bool]:
        """(the window of `route`, whether it is only a stand-in): a provider
        that asks its server is waited for at the route's first step only (or
        `wait` seconds); while its answer is still coming, `PENDING_WINDOW`
        stands in."""
        window = self.known(route)
        if window:
            return window, False
        ask = getattr(self.agent.providers.get(route[0]), "context_window_within", None)
        if ask is None:
            return None, False
        shared = wait is None
        if wait is None:
            wait = 0.0 if route in self._asked else DISCOVERY_WAIT_S
        else:  # a longer wait: at most `wait` from the route's first one, whoever waits
            clock = asyncio.get_running_loop().time()
            wait = max(0.0, self._longer_until.setdefault(route, clock + wait) - clock)
        self._asked.add(route)
        try:
            _, pending = await ask(route[1], wait, shared=shared)
        except Exception:
            return None, False
        window = self.known(route)
        if window:
            return window, False
        return (PENDING_WINDOW, True) if pending else (None, False)

    def reserve(self, window: int, route: Route) -> int:
        """The room kept for the reply."""
        info = self.agent.model_info(*route)
        return output_reserve(window, self.agent.options.max_tokens, getattr(info, "max_output_tokens", None))

    def learn(self, route: Route, named: Any, rejected: int) -> None:
        """A rejection of a request of about `rejected` tokens: the window is
        at most what the server `named`, and below the rejected size in any case."""
        if isinstance(named, int) and not isinstance(named, bool) and named > 0:
            self.learned[route] = min(named, self.learned.get(route, named))
            self.refused.pop(route, None)
            return
        window = self.known(route)
        if not window or window > rejected:
            self.learned[route] = max(1, int(rejected * OVERFLOW_AIM))
            self.refused[route] = rejected

    def warn_unknown(self, route: Route) -> None:
        if route not in self._warned:
            self._warned.add(route)
            log.warning("no context window known for %s/%s; compaction pressure is off", *route)
