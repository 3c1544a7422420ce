"""Agent events -> LSP notifications, without ever blocking the event loop.

`AgentEvents` is each agent's one subscription: durable session events go
through the `Relay` (`session/event {sessionId, events}`), live events
(`agent/status`, `agent/inbox/*`, `agent/error`, `agent/tool/progress`) as the
notification of the same name with `{sessionId, **data}`; a running session
shows `$/progress`, and the end of a turn started by `workspace/executeCommand`
is shown with `window/showMessage`. The custom notifications go only to a
client that declared `experimental.agentLsp.events`; it renders them, so the
answer of a command's turn is not repeated with showMessage (a failure still
is). Any other client gets the conversation as `window/logMessage` lines
(views/plain_transcript.py). One module holds the whole way out, so a reader
follows an event from the agent to the wire in one file.

The `Relay` (one per connection) queues durable events and flushes them from
the event loop: at once while the flush budget lasts (a token bucket of `burst` flushes refilled one per
`min_interval_s`, so first-chunk latency stays near zero and a sustained
stream is sent at most 1/min_interval_s times a second), and never while the
transport's write backlog is above `high_water_bytes` (a slow client). While events wait, consecutive text
(or reasoning) deltas of the same step are merged into one `assistant/chunk`
event carrying `lastSeq`, so the queue holds O(events that are not deltas)
items and one notification carries many chunks: memory stays bounded and the
loop never stalls on a slow reader.

A live notification first flushes the queued durable events of its session,
so a client always sees `turn/end` before `agent/status idle`. Tool progress
(`agent/tool/progress`, e.g. a command's output) is queued like the durable
events: consecutive text of the same call and stream is merged, and at most
`progress_cap_chars` of it is kept per notification (the newest; the tool's
result has the full output), so a chatty command cannot flood a slow client.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types

from agent_lsp.agent.events import AgentEvent
from agent_lsp.agent.live_events import CLIENT_LIVE_EVENTS
from agent_lsp.llm.types import message_text
from agent_lsp.views.plain_transcript import transcript_line
from agent_lsp.secrets import mask, mask_value
from agent_lsp.store.session import Event, write_pending

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.lsp.progress import ProgressReporter

log = logging.getLogger(__name__)

MERGEABLE_CHUNKS = ("text-delta", "reasoning-delta")
SHOW_MESSAGE_LIMIT = 2000  # characters of the final answer shown by window/showMessage

Send = Callable[[str, dict[str, Any]], None]


class _MergedChunk:
    """Consecutive deltas of one step, joined lazily at flush time."""

    __slots__ = ("first", "kind", "turn", "step", "parts", "last_seq")

    def __init__(self, first: Any, data: dict[str, Any], kind: str, seq: int):
        self.first = first  # the first event (an agent Event or its JSON dict)
        self.kind = kind
        self.turn = data.get("turn")
        self.step = data.get("step")
        self.parts = [data["chunk"].get("text", "")]
        self.last_seq = seq

    def to_json(self) -> dict[str, Any]:
        first = _as_json(self.first)
        if len(self.parts) == 1:
            return first
        data = dict(first["data"])
        # each delta was masked when appended; a secret split over two is masked here
        data["chunk"] = dict(data["chunk"], text=mask("".join(self.parts)))
        return dict(first, data=data, lastSeq=self.last_seq)


def _as_json(event: Any) -> dict[str, Any]:
    return event if isinstance(event, dict) else event.to_json()


class Relay:
    """One per connection; sessions of every workspace go through it."""

    def __init__(
        self,
        send: Send,
        *,
        backlog: Callable[[], int] = lambda: 0,
        min_interval_s: float = 0.004,
        burst: int = 10,
        high_water_bytes: int = 1 << 20,
    ):
        self._send = send
        self._backlog = backlog
        self.min_interval_s = min_interval_s
        self.high_water_bytes = high_water_bytes
        self._pending: dict[str, list[Any]] = {}
        self._scheduled: asyncio.Handle | asyncio.TimerHandle | None = None
        self.burst = burst
        self.progress_cap_chars = 64 * 1024
        self._progress: dict[str, list[dict[str, Any]]] = {}
        self._tokens = float(burst)
        self._refilled_at = time.monotonic()
        self.notifications_sent = 0

    # ----------------------------------------------------------------- input

    def durable(self, session_id: str, event: Any) -> None:
        """A committed session event (an agent `Event` or its JSON dict). Runs on the
        agent's chunk path: keep it cheap (no JSON conversion until the flush)."""
        if isinstance(event, dict):
            seq, kind, data = event["seq"], event["type"], event["data"]
        else:
            seq, kind, data = event.seq, event.type, event.data
        queue = self._pending.get(session_id)
        if queue is None:
            queue = self._pending[session_id] = []
        if kind == "assistant/chunk":
            chunk_kind = data.get("chunk", {}).get("type")
            if chunk_kind in MERGEABLE_CHUNKS:
                last = queue[-1] if queue else None
                if (
                    last.__class__ is _MergedChunk
                    and last.kind == chunk_kind
                    and last.turn == data.get("turn")
                    and last.step == data.get("step")
                ):
                    last.parts.append(data["chunk"].get("text", ""))
                    last.last_seq = seq
                else:
                    queue.append(_MergedChunk(event, data, chunk_kind, seq))
                if self._scheduled is None:
                    self._schedule()
                return
        queue.append(event)
        if self._scheduled is None:
            self._schedule()

    def tool_progress(self, session_id: str, call_id: str, data: dict[str, Any]) -> None:
        queue = self._progress.setdefault(session_id, [])
        last = queue[-1] if queue else None
        text = data.get("text")
        if (
            last is not None
            and isinstance(text, str)
            and set(data) <= {"stream", "text"}
            and last["callId"] == call_id
            and set(last["data"]) <= {"stream", "text", "truncated"}
            and last["data"].get("stream") == data.get("stream")
        ):
            merged = last["data"]["text"] + text
            if len(merged) > self.progress_cap_chars:
                merged = merged[-self.progress_cap_chars :]
                last["data"]["truncated"] = True
            last["data"]["text"] = merged
        else:
            queue.append({"callId": call_id, "data": dict(data)})
        if self._scheduled is None:
            self._schedule()

    def live(self, session_id: str, method: str, params: dict[str, Any]) -> None:
        """A live notification: sent now, after the session's queued durable events."""
        self.flush_session(session_id)
        self._notify(method, {"sessionId": session_id, **params})

    # ---------------------------------------------------------------- output

    def _schedule(self) -> None:
        if self._scheduled is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (unit use): flush synchronously
            self.flush()
            return
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._refilled_at) / self.min_interval_s)
        self._refilled_at = now
        if self._tokens >= 1:
            self._scheduled = loop.call_soon(self._on_timer)
        else:
            self._scheduled = loop.call_later((1 - self._tokens) * self.min_interval_s, self._on_timer)

    def _on_timer(self) -> None:
        self._scheduled = None
        if self._backlog() > self.high_water_bytes:
            # The client reads slowly: keep merging, look again shortly.
            loop = asyncio.get_running_loop()
            self._scheduled = loop.call_later(max(self.min_interval_s, 0.005), self._on_timer)
            return
        self.flush()

    def flush(self) -> None:
        self._tokens = max(0.0, self._tokens - 1)
        for session_id in list(self._pending) + list(self._progress):
            self.flush_session(session_id)

    def flush_session(self, session_id: str) -> None:
        write_pending()  # what a client is shown is on disk first: a crash cannot lose it or reuse its seqs
        queue = self._pending.pop(session_id, None)
        if queue:
            events = [item.to_json() if isinstance(item, _MergedChunk) else _as_json(item) for item in queue]
            self._notify("session/event", {"sessionId": session_id, "events": events})
        for progress in self._progress.pop(session_id, ()):
            self._notify("agent/tool/progress", {"sessionId": session_id, **progress})

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        try:
            # Session events were masked when appended (agent_lsp.store.session); the rest is masked here.
            self._send(method, params if method == "session/event" else mask_value(params))
            self.notifications_sent += 1
        except Exception:  # a broken transport must not break the agent's loop
            log.exception("could not send %s", method)

    def close(self) -> None:
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        self.flush()


class AgentEvents:
    """Each agent's events to the client: through `relay`, as `progress`, and for a
    client that does not render events (`renders_events()` false) as `log_line`s.
    The end of a turn of a session in `command_sessions` (started by a command) is
    shown with `show(text, kind)`, once."""

    def __init__(
        self,
        relay: Relay,
        progress: ProgressReporter,
        *,
        renders_events: Callable[[], bool],
        show: Callable[[str, types.MessageType], None],
        log_line: Callable[[str], None],
        command_sessions: set[str],
    ):
        self.relay = relay
        self.progress = progress
        self.renders_events = renders_events
        self.show = show
        self.log_line = log_line
        self.command_sessions = command_sessions
        self._relayed: dict[str, int] = {}  # session id -> the next seq the client has not been sent

    def attach(self, agent: Agent) -> Callable[[], None]:
        """Stream a new agent's events to the client: one subscription, each
        event sent as it comes (payloads are complete at the source); returns
        the unsubscribe."""
        sid = agent.session_id
        relay = self.relay
        progress = self.progress
        relayed = self._relayed
        # An agent rebuilt for a session this client already follows (new settings)
        # starts from a fresh load, which may have appended events (session/end-seed):
        # send what the client has not seen, so every seq reaches it once. The first
        # agent of a session counts what its log holds as seen (the client reads
        # that by loading it), also when nothing was sent yet: a new session rebuilt
        # before its first turn still sends its end-seed.
        if sid in relayed:
            for event in agent.session.events[relayed[sid]:]:
                relay.durable(sid, event)
        else:
            relayed[sid] = len(agent.session.events)

        def send(event: AgentEvent) -> None:
            kind = event.type
            if event.__class__ is Event:  # the hot path: every chunk
                relayed[sid] = event.seq + 1  # type: ignore[union-attr]
                relay.durable(sid, event)
                if kind == "tool/call":
                    progress.report(sid, event.data.get("name", "tool"))
            elif kind == "agent/tool/progress":
                relay.tool_progress(sid, event.data["callId"], event.data["data"])
            elif kind == "agent/status":
                self._on_status(agent, event.data["status"])
            elif kind in CLIENT_LIVE_EVENTS:
                relay.live(sid, kind, event.data)

        return agent.subscribe(send if self.renders_events() else self._plain(agent))

    def _plain(self, agent: Agent):
        """The subscriber for a client that does not render events: log lines, progress, status."""

        def send(event: AgentEvent) -> None:
            kind = event.type
            if event.__class__ is Event:
                if kind == "tool/call":
                    self.progress.report(agent.session_id, event.data.get("name", "tool"))
                line = transcript_line(kind, event.data)
                if line:
                    self.log_line(line)
            elif kind == "agent/status":
                self._on_status(agent, event.data["status"])

        return send

    def _on_status(self, agent: Agent, status: str) -> None:
        sid = agent.session_id
        renders_events = self.renders_events()
        if renders_events:
            self.relay.live(sid, "agent/status", {"status": status})
        if status == "running":
            self.progress.running(sid, "agent-lsp: working", lambda: agent.cancel("user"))
            return
        self.progress.idle(sid)
        if sid in self.command_sessions:
            self.command_sessions.discard(sid)
            kind, text = self._turn_outcome(agent)
            # A client that renders events shows the answer itself; a failure is still said.
            if text and (not renders_events or kind == types.MessageType.Error):
                self.show(text[:SHOW_MESSAGE_LIMIT], kind)

    @staticmethod
    def _turn_outcome(agent: Agent) -> tuple[types.MessageType, str]:
        """What to tell the user of a command-started turn: its answer, or why it ended without one."""
        reason: dict[str, Any] = {}
        for event in reversed(agent.session.events):
            if event.type == "turn/end" and not reason:
                reason = event.data.get("reason") or {}
            elif event.type == "assistant/message":
                answer = message_text(event.data.get("message", {})).strip()
                if answer and reason.get("kind") in ("completed", "max-tokens", None):
                    return types.MessageType.Info, answer
                break
            elif event.type == "turn/start":
                break
        if reason.get("kind") == "error":
            error = reason.get("error") or {}
            return types.MessageType.Error, f"agent-lsp: {error.get('code', 'error')}: {error.get('message', '')}".rstrip(": ")
        if reason.get("kind") == "aborted":
            return types.MessageType.Info, "agent-lsp: cancelled"
        return types.MessageType.Info, ""
