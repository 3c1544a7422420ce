"""One session as the ACP client follows it: its updates, in order, and its prompts' ends.

Every event of the agent is turned into `session/update`s (acp/updates.py)
and queued; one task sends the queue in order, so a prompt's answer goes out
only after every update of its turn (`drained()`).

A prompt is a followup with an id of ours; the turn that claims it
(`agent/inbox/claimed`) answers it when it ends (`turn/end`), with the stop
reason of that end. A prompt sent while a turn runs waits in the agent's inbox
and is claimed by the next turn; one discarded from the inbox (a cancel clears
it) ends as cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from agent_lsp.acp.updates import UpdateMapper
from agent_lsp.agent import Agent
from agent_lsp.agent.events import AgentEvent
from agent_lsp.store import Event

log = logging.getLogger(__name__)

CANCELLED = {"kind": "aborted", "reason": {"kind": "user"}}


class AcpSession:
    def __init__(self, agent: Agent, mapper: UpdateMapper, send: Callable[[str, Any], Awaitable[None]]):
        self.agent = agent
        self.session_id = agent.session_id
        self.mapper = mapper
        self._send = send
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._pump = asyncio.ensure_future(self._run())
        self._prompts: dict[str, asyncio.Future[dict[str, Any]]] = {}  # message id -> its turn's end reason
        self._turn_of: dict[str, int] = {}  # message id -> the turn that claimed it
        self._unsubscribe = agent.subscribe(self._on_event)

    # ---------------------------------------------------------------- updates

    def replay(self) -> None:
        """Queue the updates of everything already in the log (session/load)."""
        mapper = UpdateMapper(self.mapper.root)
        for event in self.agent.session.events:
            for update in mapper.updates(event, replay=True):
                self._queue.put_nowait(update)

    def push(self, update: Any) -> None:
        self._queue.put_nowait(update)

    async def drained(self) -> None:
        await self._queue.join()

    async def _run(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._send(self.session_id, update)
            except ConnectionError:
                pass  # the client is gone; the session log has everything
            except Exception:
                log.exception("sending a session/update of %s", self.session_id)
            finally:
                self._queue.task_done()

    def _on_event(self, event: AgentEvent) -> None:
        if event.__class__ is Event:
            for update in self.mapper.updates(event):  # type: ignore[arg-type]
                self._queue.put_nowait(update)
            if event.type == "turn/end":
                self._turn_ended(event.data)
            return
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
        for future in self._prompts.values():
            if not future.done():
                future.set_result(CANCELLED)
        self._prompts.clear()
