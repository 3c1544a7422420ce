"""One session as the ACP client follows it: its updates, in order, and its prompts' ends.

Every event of the agent is turned into `session/update`s (acp/updates.py)
and queued; one task sends the queue in order, so a prompt's answer goes out
only after every update of its turn (`drained()`).

Text deltas are coalesced as the LSP face's relay does: while an
`agent_message_chunk` (or `agent_thought_chunk`) waits to be sent, the next
delta of the same kind is appended to it, so one notification carries every
delta that arrived since the last one went out. Nothing is reordered: only
the newest queued item grows, and a tool call queued after it starts a new
one. Sends are paced by a token bucket (`burst` at once, then one per
`min_interval_s`), so the first chunk goes out at once and a long stream
becomes a few hundred notifications a second instead of one per delta.

Changes of the agent's inbox queue one `_agent-lsp/queue` notification
(acp/queue.py), made from the queue as it is when its turn to be sent comes,
and left out when the client was already shown that queue: a prompt taken
by a turn as soon as it arrives shows no queue at all.

A prompt is a followup with an id of ours; the turn that claims it
(`agent/inbox/claimed`) answers it when it ends (`turn/end`), with the stop
reason of that end. A prompt sent while a turn runs waits in the agent's inbox
and is claimed by the next turn; one discarded from the inbox (a cancel clears
it) ends as cancelled.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any, Awaitable, Callable

from acp import update_agent_message_text, update_agent_thought_text

from agent_lsp.acp.queue import INBOX_EVENTS, QUEUE_NOTIFICATION, queue_params
from agent_lsp.acp.updates import UpdateMapper, text_delta
from agent_lsp.agent import Agent
from agent_lsp.agent.events import AgentEvent
from agent_lsp.secrets import mask
from agent_lsp.store import Event
from agent_lsp.store.session import write_pending

log = logging.getLogger(__name__)

CANCELLED = {"kind": "aborted", "reason": {"kind": "user"}}


class _Text:
    """Consecutive text deltas of one kind, joined when sent."""

    __slots__ = ("thought", "parts")

    def __init__(self, thought: bool, text: str):
        self.thought = thought
        self.parts = [text]

    def update(self) -> Any:
        # each delta was masked when logged; a secret split over two is masked here
        text = "".join(self.parts) if len(self.parts) == 1 else mask("".join(self.parts))
        return update_agent_thought_text(text) if self.thought else update_agent_message_text(text)


class Notice:
    """An extension notification, sent in order with the session's updates."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: dict[str, Any]):
        self.method = method
        self.params = params


class _QueueShown:
    """A marker: the queue changed; sent as `_agent-lsp/queue` with the queue as it is then."""


QUEUE_CHANGED = _QueueShown()


class AcpSession:
    def __init__(self, agent: Agent, mapper: UpdateMapper, send: Callable[[str, Any], Awaitable[None]], *,
                 burst: int = 10, min_interval_s: float = 0.004):
        self.agent = agent
        self.session_id = agent.session_id
        self.mapper = mapper
        self._send = send  # (session id, an update or a Notice)
        self._pending: collections.deque[Any] = collections.deque()
        self._wake = asyncio.Event()
        self._sending = False
        self._drained: list[asyncio.Future[None]] = []
        self.burst = burst
        self.min_interval_s = min_interval_s
        self._tokens = float(burst)
        self._refilled_at = time.monotonic()
        self._queue_marked = False
        self._queue_shown: dict[str, Any] = {"sessionId": self.session_id, "queue": [], "paused": False}
        self._pump = asyncio.ensure_future(self._run())
        self._prompts: dict[str, asyncio.Future[dict[str, Any]]] = {}  # message id -> its turn's end reason
        self._turn_of: dict[str, int] = {}  # message id -> the turn that claimed it
        self._unsubscribe = agent.subscribe(self._on_event)

    # ---------------------------------------------------------------- updates

    def replay(self) -> None:
        """Queue the updates of everything already in the log (session/load)."""
        mapper = UpdateMapper(self.mapper.root, self.agent.session.files)
        for event in self.agent.session.events:
            self._queue_event(mapper, event, replay=True)
        self._queue_changed()  # what is still queued (a load in another process starts shown nothing)

    def _queue_changed(self) -> None:
        if not self._queue_marked:
            self._queue_marked = True
            self.push(QUEUE_CHANGED)

    def push(self, update: Any) -> None:
        """Queue an update (or a Notice) after everything queued so far."""
        self._pending.append(update)
        self._wake.set()

    def _queue_event(self, mapper: UpdateMapper, event: Event, *, replay: bool = False) -> None:
        delta = text_delta(event)
        if delta is None:
            for update in mapper.updates(event, replay=replay):
                self.push(update)
            return
        thought, text = delta
        last = self._pending[-1] if self._pending else None
        if last.__class__ is _Text and last.thought == thought:
            last.parts.append(text)
        else:
            self.push(_Text(thought, text))

    async def drained(self) -> None:
        """Returns once everything queued so far has been sent."""
        if not self._pending and not self._sending:
            return
        future = asyncio.get_running_loop().create_future()
        self._drained.append(future)
        await future

    async def _run(self) -> None:
        while True:
            if not self._pending:
                for future in self._drained:
                    if not future.done():
                        future.set_result(None)
                self._drained.clear()
                self._wake.clear()
                await self._wake.wait()
                continue
            self._sending = True
            await self._pace()  # before taking the item: deltas that arrive meanwhile join it
            item = self._pending.popleft()
            if item is QUEUE_CHANGED:
                self._queue_marked = False
                shown = queue_params(self.agent)
                if shown == self._queue_shown:
                    self._tokens += 1  # nothing sent
                    self._sending = False
                    continue
                self._queue_shown, item = shown, Notice(QUEUE_NOTIFICATION, shown)
            try:
                write_pending()  # what a client is shown is on disk first, as over LSP
                await self._send(self.session_id, item.update() if item.__class__ is _Text else item)
            except ConnectionError:
                pass  # the client is gone; the session log has everything
            except Exception:
                log.exception("sending a session/update of %s", self.session_id)
            finally:
                self._sending = False

    async def _pace(self) -> None:
        """Take a token; while none is left, wait (and let deltas gather) until one is."""
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._refilled_at) / self.min_interval_s)
        self._refilled_at = now
        if self._tokens < 1:
            await asyncio.sleep((1 - self._tokens) * self.min_interval_s)
            self._tokens, self._refilled_at = 1.0, time.monotonic()
        self._tokens -= 1

    def _on_event(self, event: AgentEvent) -> None:
        if event.__class__ is Event:
            self._queue_event(self.mapper, event)  # type: ignore[arg-type]
            if event.type == "turn/end":
                self._turn_ended(event.data)
            return
        if event.type in INBOX_EVENTS:
            self._queue_changed()
        if event.type == "agent/inbox/claimed":
            message_id = (event.data.get("message") or {}).get("id")
            if message_id in self._prompts:
                self._turn_of[message_id] = event.data["turn"]
        elif event.type == "agent/inbox/discarded":
            self._resolve((event.data.get("message") or {}).get("id"), CANCELLED)

    # ---------------------------------------------------------------- prompts

    def expect(self, message_id: str) -> asyncio.Future[dict[str, Any]]:
        """The end reason of the turn that will take the prompt `message_id`."""
        future = asyncio.get_running_loop().create_future()
        self._prompts[message_id] = future
        return future

    def _turn_ended(self, data: dict[str, Any]) -> None:
        turn = data.get("turn")
        for message_id, claimed in list(self._turn_of.items()):
            if claimed == turn:
                self._resolve(message_id, data.get("reason") or {})

    def _resolve(self, message_id: str | None, reason: dict[str, Any]) -> None:
        future = self._prompts.pop(message_id or "", None)
        self._turn_of.pop(message_id or "", None)
        if future is not None and not future.done():
            future.set_result(reason)

    def open_prompts(self) -> list[str]:
        return list(self._prompts)

    def cancel_prompts(self, message_ids: list[str]) -> None:
        """session/cancel: these prompts end as cancelled now, if their turns have not
        ended yet (a prompt sent after the cancel is not one of them)."""
        for message_id in message_ids:
            self._resolve(message_id, CANCELLED)

    def close(self) -> None:
        self._unsubscribe()
        self._pump.cancel()
        for waiter in self._drained:
            if not waiter.done():
                waiter.set_result(None)
        for future in self._prompts.values():
            if not future.done():
                future.set_result(CANCELLED)
        self._prompts.clear()
