"""The agent: a live handle that drives one session (R2–R7).

A waking send on an idle agent starts the driver synchronously: the status
flips to running, `turn/start` is appended and the first batch is claimed
before `followup()` returns (R3.3). The rest of the turn runs in one
asyncio task (the driver), turn after turn while work is pending; what one
turn does (steps, requests, the model stream, tools) is loop.TurnLoop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Awaitable, Callable

from agent_lsp.agent.accounting import WorkAccount, account_work
from agent_lsp.agent.compaction import Compaction, CompactionError, install_compaction
from agent_lsp.agent.events import AgentEvent, LiveEvent
from agent_lsp.agent.hooks import HookBus
from agent_lsp.agent.history import derive_messages
from agent_lsp.agent.inbox import NEXT_STEP, NEXT_TURN, Inbox, make_message
from agent_lsp.agent.options import AgentOptions
from agent_lsp.agent.loop import TurnLoop
from agent_lsp.agent.registry import ToolRegistry
from agent_lsp.agent.retry import install_fallback, install_retry
from agent_lsp.agent.signal import CancelToken, normalize_cause
from agent_lsp.llm.types import ModelProvider
from agent_lsp.store.session import Session

log = logging.getLogger(__name__)

class AgentDisposedError(RuntimeError):
    pass


class AgentBusyError(RuntimeError):
    pass


class Agent:
    def __init__(
        self,
        session: Session,
        *,
        providers: dict[str, ModelProvider],
        tools: ToolRegistry | None = None,
        options: AgentOptions,
        subscribers: list[Callable[[AgentEvent], Any]] | tuple[Callable[[AgentEvent], Any], ...] = (),
        start_source: str | None = None,
    ):
        """`subscribers` are subscribed (see `subscribe`) before anything is
        emitted, so they see `agent/created` and `agent/session-start`.
        `start_source` overrides the session-start source ("startup" for a
        new session, "resume" for a loaded or forked one; e.g. "clear")."""
        self.session = session
        self.id = session.id
        self.session_id = session.id
        self.providers = dict(providers)
        self.tools = tools if tools is not None else ToolRegistry()
        self.options = options
        self.hooks = HookBus()
        self._subscribers: list[Callable[[AgentEvent], Any]] = []
        self._emit_queue: deque[LiveEvent] = deque()
        self._emitting = False
        self.inbox = Inbox(session, self.emit)
        # R2.12: only splices after the header's seedLength (a fork's inherited
        # prefix) rebuild the inbox: a parent's pending work is not the child's.
        # (held events only: the stream chunks a long session keeps on disk hold no splice)
        self.inbox.rebuild(session.events.held(session.inherited_length))
        self._status = "idle"
        self._token: CancelToken | None = None  # the active activity's controller
        self._activity: asyncio.Task[None] | None = None
        self._maintenance = False
        self._maintenance_done: asyncio.Future[None] | None = None
        self._wake_latched = False
        self._disposing = False
        self._disposed = False
        self._dispose_task: asyncio.Future[None] | None = None
        self._last_turn = session.last_turn()
        self.loop = TurnLoop(self, self.inbox)
        self.idle_listeners: list[Callable[[], Any]] = []
        for fn in subscribers:
            self.subscribe(fn)
        self._install_plugins()
        self.emit("agent/created", {"agentId": self.id, "sessionId": self.session_id})
        source = start_source or ("resume" if session.resumed else "startup")
        self.emit("agent/session-start", {"source": source, "sessionId": self.session_id})

    def _install_plugins(self) -> None:
        if self.options.retry.enabled:
            install_retry(self)
        if self.options.fallback_provider or self.options.fallback_model:
            install_fallback(self)
        if self.options.compaction.enabled:
            self.compaction = install_compaction(self)
        else:
            self.compaction = None

    # ------------------------------------------------------------ the stream

    def subscribe(self, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
        """Every event of this agent, in one stream: durable ones (`Event`)
        right after commit in seq order, live ones (`LiveEvent`) as they
        happen (agent/durable_events.py and agent/live_events.py list them). A live event is delivered after
        every durable event committed before it. Returns the unsubscribe."""
        off_durable = self.session.subscribe(fn)
        self._subscribers.append(fn)

        def off() -> None:
            off_durable()
            if fn in self._subscribers:
                self._subscribers.remove(fn)

        return off

    def emit(self, type: str, data: dict[str, Any]) -> None:
        """Deliver a live event (plugins and tools emit theirs here; agent/live_events.py
        lists them). One emitted from inside a subscriber is
        queued behind the one being delivered, so every subscriber sees the
        same order (a status never appears to repeat)."""
        if not self._subscribers:
            return
        self._emit_queue.append(LiveEvent(type, data))
        if self._emitting:
            return
        self._emitting = True
        try:
            while self._emit_queue:
                event = self._emit_queue.popleft()
                for fn in tuple(self._subscribers):
                    try:
                        fn(event)
                    except Exception:  # subscriber errors are contained
                        log.exception("subscriber failed on %s", event.type)
        finally:
            self._emitting = False

    @property
    def last_header(self) -> dict[str, Any] | None:
        """The request header of the latest `request/header` (this agent's or the log's)."""
        return self.loop.last_header

    async def run_hook(self, token: CancelToken, name: str, payload: dict[str, Any],
                       terminal: Callable[[Any], Any] | None) -> Any:
        """Run a hook point as the loop does (loop.TurnLoop.run_hook)."""
        return await self.loop.run_hook(token, name, payload, terminal)

    def context_window(self, provider_name: str, model: str) -> int | None:
        return self.loop.context_window(provider_name, model)

    def model_info(self, provider_name: str, model: str) -> Any:
        return self.loop.model_info(provider_name, model)

    @property
    def assembly(self) -> dict[str, Any] | None:
        """The system prompt and tools of the step being prepared (or the last one)."""
        return self.loop.assembly

    def next_route(self) -> tuple[str, str]:
        """(provider, model) the next request goes to, as far as known before `agent/request`."""
        return self.loop.next_route()

    def switch_model(self, provider_name: str, model: str, effort: str | None,
                     provider: ModelProvider | None = None) -> ModelProvider | None:
        """Use `model` of `provider_name` from the next step on (the step running
        keeps its model); `provider` replaces the one of that name. Returns the
        replaced provider, for the caller to close when nothing streams from it."""
        replaced = None
        if provider is not None:
            replaced = self.providers.get(provider_name)
            self.providers[provider_name] = provider
        self.options.provider, self.options.model, self.options.reasoning_effort = provider_name, model, effort
        self.loop.forget_route()
        return replaced if replaced is not provider else None

    @property
    def status(self) -> str:
        return self._status

    def _set_status(self, status: str) -> None:
        if status == self._status:
            return  # never repeats (R3.2)
        self._status = status
        self.emit("agent/status", {"status": status})

    def derive_messages(self) -> list[dict[str, Any]]:
        return derive_messages(self.session)

    def consumed_work(self, *, start: int = 0) -> WorkAccount:
        """Consumed-work accounting over this session's log from seq `start` (R2.13)."""
        return account_work(self.session.events, start=start)

    # ------------------------------------------------------------------ inbox

    def followup(self, content: str | list[dict[str, Any]], *, id: str | None = None, source: str = "user",
                 context: list[dict[str, Any]] | None = None, note: dict[str, str] | None = None) -> dict[str, Any]:
        return self._send(make_message(content, id=id, source=source, context=context, note=note), NEXT_TURN, True)

    def steer(self, content: str | list[dict[str, Any]], *, id: str | None = None, source: str = "user",
              context: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self._send(make_message(content, id=id, source=source, context=context, delivery="steer"), NEXT_STEP, True)

    def inject(self, content: str | list[dict[str, Any]], *, id: str | None = None, source: str = "user",
               context: list[dict[str, Any]] | None = None, note: dict[str, str] | None = None) -> dict[str, Any]:
        return self._send(make_message(content, id=id, source=source, context=context, delivery="inject", note=note),
                          NEXT_STEP, False)

    def remove(self, message_id: str) -> bool:
        removed = self.inbox.remove(message_id)
        if removed:
            self._flush_when_idle()
        return removed

    def _flush_when_idle(self) -> None:
        """An inbox change while idle reaches no checkpoint soon: write it now
        so queued work survives a crash of an idle server."""
        if self._token is None and not self._maintenance:
            self._flush_reporting(None)

    def _send(self, message: dict[str, Any], target: str, wake: bool) -> dict[str, Any]:
        if self._disposed:
            raise AgentDisposedError(f"agent {self.id} is disposed")
        token = self._token
        aborted = token is not None and token.aborted
        if wake and aborted:
            target = NEXT_TURN  # R2.11: fixed before the insertion
        self.inbox.append(target, message)
        if not wake:
            self._flush_when_idle()
            return message
        self.wake()
        return message

    def wake(self) -> None:
        """Start a turn for the queued work when idle, or latch the wake while a
        cancelled turn or maintenance finishes (R7.6); nothing when the inbox has
        no work a turn would take (empty, or only a paused queue)."""
        if self._disposing or self._disposed:
            return  # queued durably; never started or latched during disposal
        if not self.inbox.pending:
            self._flush_when_idle()
            return
        token = self._token
        if token is None and not self._maintenance:
            self._start_driver()
        elif (token is not None and token.aborted) or self._maintenance:
            cause = token.reason if token is not None else None
            if not (cause and cause.get("kind") == "disposed"):
                self._wake_latched = True

    # ----------------------------------------------------------------- driver

    def _start_driver(self) -> None:
        token = CancelToken()
        self._token = token
        self._set_status("running")  # a listener may cancel here (R7.3)
        prepared = self._open_turn(token)
        self._activity = asyncio.get_running_loop().create_task(self._drive(token, prepared))

    def _open_turn(self, token: CancelToken) -> tuple[int, list[dict[str, Any]]] | None:
        """Synchronous: the start of a turn, R4.2 (abort check, turn/start, claim)."""
        if token.aborted:
            return None
        self._last_turn += 1
        turn = self._last_turn
        self.session.append("turn/start", {"turn": turn})
        batch = self.inbox.claim(first_step=True, turn=turn)
        return turn, batch

    async def _drive(self, token: CancelToken, prepared: tuple[int, list[dict[str, Any]]] | None) -> None:
        try:
            while prepared is not None:
                turn, batch = prepared
                go_on = await self.loop.run_turn(token, turn, batch)
                if not go_on or self._disposing or not self.inbox.pending:
                    break
                token = CancelToken()  # a fresh controller per turn
                self._token = token
                prepared = self._open_turn(token)
        finally:
            self._retire()

    def _retire(self) -> None:
        self._token = None
        self._activity = None
        if self._wake_latched and self.inbox.pending and not self._disposing and not self._disposed:
            self._wake_latched = False
            self._start_driver()  # the latched wake replays at convergence; status stays running
            return
        self._wake_latched = False
        self._flush_reporting(self._last_turn)
        self._set_status("idle")
        for fn in tuple(self.idle_listeners):
            try:
                fn()
            except Exception:
                log.exception("idle listener failed")

    def _flush_reporting(self, turn: int | None) -> None:
        """Flush at idle; a failure is reported (agent/error, the log), never
        written as a session event after a closed turn (R11.2)."""
        try:
            self.session.flush()
        except OSError as e:
            log.error("flushing session %s failed: %s", self.id, e)
            self.emit("agent/error", {"turn": turn, "step": None,
                                       "error": {"code": "PERSISTENCE", "message": str(e)}})

    async def when_idle(self) -> None:
        """Resolve once the agent is quiescent, following replacement activity."""
        while True:
            task = self._activity
            if task is None:
                if self._maintenance and self._maintenance_done is not None:
                    await asyncio.wait([self._maintenance_done])
                    continue
                if self._token is None:
                    return
                await asyncio.sleep(0)  # a driver is being started synchronously
                continue
            await asyncio.wait([task])

    # ----------------------------------------------------------------- cancel

    def cancel(self, cause: str | dict[str, Any] = "user", *, keep_inbox: bool = False) -> None:
        normalized = normalize_cause(cause)
        if not keep_inbox:
            self.inbox.clear()
            self._wake_latched = False
        if self._token is not None:
            self._token.abort(normalized)
        else:
            self._flush_when_idle()

    def dispose(self) -> "asyncio.Future[None]":
        """cancel({disposed}) synchronously (keeping the inbox durable for a
        later resume), then wait for idle and flush. Returns an awaitable
        task. Wakes during disposal are not latched; the queued tail never
        starts."""
        if self._dispose_task is not None:
            return self._dispose_task
        self._disposing = True
        self.cancel("disposed", keep_inbox=True)
        self._dispose_task = asyncio.ensure_future(self._finish_dispose())
        return self._dispose_task

    async def _finish_dispose(self) -> None:
        await self.when_idle()
        self.session.close()  # flushes; a later load() of this id reads the file afresh
        self._disposed = True
        self.emit("agent/disposed", {"agentId": self.id, "sessionId": self.session_id})

    # ------------------------------------------------------------ maintenance

    def run_maintenance(self, task: Callable[[CancelToken], Awaitable[Any]]) -> "asyncio.Task[Any]":
        """Start `task(signal)` between turns (R3.6) and return its asyncio
        task (await it for the result). Only from true idle: otherwise this
        raises AgentBusyError synchronously. While it runs the status stays
        idle, waking sends are latched and replay afterwards, and cancel()
        aborts its signal."""
        if self._disposed or self._disposing:
            raise AgentDisposedError(f"agent {self.id} is disposed")
        if self._token is not None or self._maintenance:
            raise AgentBusyError("maintenance can only start while the agent is idle")
        loop = asyncio.get_running_loop()
        token = CancelToken()
        self._token = token
        self._maintenance = True
        done = self._maintenance_done = loop.create_future()

        async def run() -> Any:
            try:
                return await task(token)
            finally:
                self._maintenance = False
                self._maintenance_done = None
                done.set_result(None)
                self._token = None
                self._flush_reporting(None)
                if self._wake_latched and self.inbox.pending and not self._disposing:
                    self._wake_latched = False
                    self._start_driver()
                self._wake_latched = False

        return loop.create_task(run())

    def compact_now(self) -> "Awaitable[dict[str, Any] | None]":
        """Manual compaction as a maintenance task (R10.9); await the result:
        a summary of what was compacted, or None when there was nothing to
        compact. Raises CompactionError(kind), kind busy (synchronously, when
        the agent is not idle), cancelled, changed, summary, commit or
        persistence."""
        compaction = self.compaction or Compaction(self)
        try:
            return self.run_maintenance(compaction.compact_manual)
        except AgentBusyError as e:
            raise CompactionError("busy", str(e)) from None
