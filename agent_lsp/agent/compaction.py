"""Compaction (R10): a plugin on the hook bus, not part of the loop spine.

- Pressure, in `agent/pre-step` (before `step/start`, inside the open turn):
  when the measured request exceeds `threshold_ratio` of the context window,
  prune large tool results first; if still above, summarise the oldest part
  of the surface (keeping about `retain` tokens) into a checkpoint message.
  Failures are logged and swallowed; `next()` always runs.
- Overflow, in `agent/request-error`, for CONTEXT_WINDOW_EXCEEDED only:
  prune, then summarise everything up to the last balanced cut, and retry
  iff the surface replacement generation advanced (the proof of progress).
- Manual `compact_now()`: a maintenance task between turns (retain 0, a
  standalone bracket with `turn: null`).

The summary transaction never splits an assistant tool call from its result:
ranges end at balanced cuts only.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any

from agent_lsp.agent.history import Assembler
from agent_lsp.agent.inbox import new_message_id
from agent_lsp.agent.signal import Aborted
from agent_lsp.llm.types import CONTEXT_WINDOW_EXCEEDED, ModelRequest

if TYPE_CHECKING:
    from agent_lsp.agent.host import AgentHost
    from agent_lsp.agent.signal import CancelToken

log = logging.getLogger(__name__)

PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
CHECKPOINT_HEADER = "[RECOVERY CHECKPOINT] Summary of the earlier conversation, which was compacted:\n\n"
SUMMARY_INSTRUCTION = (
    "Summarise the conversation so far for your own later use: the user's goals and constraints, decisions made, "
    "files read or changed and why, tool results that still matter, and the work that remains. Be concise and "
    "factual; do not call tools."
)
CHARS_PER_TOKEN = 4


class CompactionError(Exception):
    """A typed compaction failure: kind is busy, cancelled, changed, summary, commit or persistence."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(f"{kind}: {message}")


def estimate_tokens(message: dict[str, Any]) -> int:
    n = 0
    for b in message.get("content") or ():
        n += len(b.get("text") or "") + len(b.get("arguments") or "") + len(b.get("name") or "")
    return 4 + (n + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _message(event: Any) -> dict[str, Any]:
    """A surface node's message; a node without one (a rewind) is an empty message."""
    return event.data.get("message") or {}


def _prune_text(text: str, threshold: int, head: int, tail: int) -> str:
    if len(text) <= threshold:  # len counts code points
        return text
    return text[:head] + PRUNE_MARKER + text[-tail:]


class Compaction:
    def __init__(self, agent: "AgentHost"):
        self.agent = agent
        self.options = agent.options.compaction
        self.overflow_retries = 0
        self._busy = False
        self._warned: set[tuple[str, str]] = set()
        self.summary_requests = 0

    # ---------------------------------------------------------------- install

    def install(self) -> None:
        hooks = self.agent.hooks
        hooks.register("agent/pre-step", self._on_pre_step)
        hooks.register("agent/request-error", self._on_request_error)
        self.agent.session.subscribe(self._on_event)
        self.agent.idle_listeners.append(self._reset_budget)

    def _reset_budget(self) -> None:
        self.overflow_retries = 0

    def _on_event(self, event: Any) -> None:
        if event.type == "assistant/message" and not event.data.get("interrupted"):
            self.overflow_retries = 0

    # ---------------------------------------------------------------- measure

    def routed_target(self) -> tuple[str, str] | None:
        h = self.agent.last_header
        if not h:
            return None
        return str(h.get("provider")), str(h.get("model"))

    def _last_header(self) -> dict[str, Any]:
        return self.agent.last_header or {}

    def measure(self) -> int:
        """Tokens of the next request: envelope + surface. Reuses the latest
        provider usage when nothing before it was replaced since, else estimates."""
        session = self.agent.session
        events = session.events
        surface = session.surface
        for i in range(len(surface) - 1, -1, -1):
            e = events[surface[i]]
            if e.type == "assistant/message" and e.data.get("usage"):
                if session.last_replace_seq > e.seq:
                    break  # a replacement landed after this usage was measured
                usage = e.data["usage"]
                base = int(usage.get("inputTokens") or 0) + int(usage.get("outputTokens") or 0)
                if base <= 0:
                    break
                return base + sum(estimate_tokens(_message(events[s])) for s in surface[i + 1 :])
        header = self._last_header()
        envelope = (len(header.get("system") or "") + len(str(header.get("tools") or ""))) // CHARS_PER_TOKEN
        return envelope + sum(estimate_tokens(_message(events[s])) for s in surface)

    # ----------------------------------------------------------------- prune

    def prune(self) -> int:
        """Replace each oversized tool result on the surface by head + marker +
        tail. Idempotent. Returns how many results were pruned."""
        o = self.options
        session = self.agent.session
        events = session.events
        pruned = 0
        for seq in list(session.surface):
            e = events[seq]
            if e.type != "tool/result":
                continue
            content = e.data["message"].get("content") or []
            if not any(b.get("type") == "text" and len(b.get("text") or "") > o.prune_threshold_chars for b in content):
                continue
            new_content = [
                {**b, "text": _prune_text(b["text"], o.prune_threshold_chars, o.prune_head_chars, o.prune_tail_chars)}
                if b.get("type") == "text" else b
                for b in content
            ]
            before = estimate_tokens(e.data["message"])
            message = {**e.data["message"], "content": new_content}
            session.append("compaction/prune", {"seq": seq, "tokensBefore": before, "tokensAfter": estimate_tokens(message)})
            data = {k: v for k, v in e.data.items() if k not in ("message", "surfaceOp", "sourceEventSeqs")}
            data["message"] = message
            data["surfaceOp"] = {"kind": "replace", "start": seq, "end": seq}
            data["sourceEventSeqs"] = [seq]
            session.append("tool/result", data)
            pruned += 1
        return pruned

    # ------------------------------------------------------------ selection

    def select_range(self, retain: int) -> list[int] | None:
        """Surface seqs to compact, keeping about `retain` tokens at the tail
        and cutting only where no tool call is separated from its result."""
        session = self.agent.session
        events = session.events
        surface = session.surface
        if len(surface) < 2:
            return None  # one message (a prompt too big by itself): a summary of it is not the prompt
        keep_from = len(surface)
        total = 0
        while keep_from > 0 and total < retain:
            keep_from -= 1
            total += estimate_tokens(_message(events[surface[keep_from]]))
        while keep_from > 0 and not self._balanced_cut(keep_from):
            keep_from -= 1
        if keep_from <= 0:
            return None
        rng = surface[:keep_from]
        if len(rng) == 1 and _message(events[rng[0]]).get("source") == "compaction":
            return None  # only a checkpoint: nothing to gain
        return rng

    def _balanced_cut(self, pos: int) -> bool:
        events = self.agent.session.events
        open_calls: set[str] = set()
        for seq in self.agent.session.surface[:pos]:
            m = _message(events[seq])
            role = m.get("role")
            if role == "assistant":
                for b in m.get("content") or ():
                    if b.get("type") == "tool-call":
                        open_calls.add(str(b.get("id")))
            elif role == "tool":
                open_calls.discard(str(m.get("callId")))
        return not open_calls

    # ----------------------------------------------------------- transaction

    async def compact_region(self, rng: list[int], turn: int | None, signal: "CancelToken") -> dict[str, Any]:
        if self._busy:
            raise CompactionError("busy", "a compaction is already running")
        self._busy = True
        session = self.agent.session
        compaction_id = f"cmp_{secrets.token_hex(4)}"
        start_event = session.append("compaction/start", {"compactionId": compaction_id, "turn": turn})
        try:
            surface_before = list(session.surface)
            events = session.events
            shadowed = [m for s in rng if (m := _message(events[s]))]
            shadowed_tokens = sum(estimate_tokens(m) for m in shadowed)
            summary, provider_name, model, usage = await self._summarise(shadowed, signal)
            framed = CHECKPOINT_HEADER + summary.strip()
            checkpoint = {"role": "user", "id": new_message_id(), "source": "compaction",
                          "compactionId": compaction_id, "content": [{"type": "text", "text": framed}]}
            if estimate_tokens(checkpoint) >= shadowed_tokens:
                raise CompactionError("summary", "the summary is not smaller than what it replaces")
            if session.surface != surface_before:
                raise CompactionError("changed", "the conversation changed during summarisation")
            summary_data: dict[str, Any] = {
                "compactionId": compaction_id, "summary": summary, "shadowedRange": [rng[0], rng[-1]],
                "shadowedSeqs": list(rng), "shadowedTokenCount": shadowed_tokens, "provider": provider_name,
                "model": model,
            }
            if self.options.summary_max_tokens:
                summary_data["maxTokens"] = self.options.summary_max_tokens
            if usage:
                summary_data["usage"] = usage
            summary_event = session.append("compaction/summary", summary_data)
            session.append("user/message", {
                "turn": turn, "step": None, "message": checkpoint,
                "surfaceOp": {"kind": "replace", "start": rng[0], "end": rng[-1]},
                "sourceEventSeqs": [start_event.seq, summary_event.seq, *rng],
            })
            session.append("compaction/end", {"compactionId": compaction_id, "turn": turn})
            # The history now starts from a checkpoint: plugins that re-inject
            # context at a session start hear it (R8, source "compact").
            self.agent.emit("agent/session-start", {"source": "compact", "sessionId": self.agent.session_id,
                                                     "compactionId": compaction_id})
            return {"compactionId": compaction_id, "shadowedSeqs": list(rng), "shadowedTokenCount": shadowed_tokens}
        except BaseException as e:
            session.append("compaction/end", {"compactionId": compaction_id, "turn": turn,
                                              "error": {"message": str(e) or type(e).__name__,
                                                        "kind": getattr(e, "kind", "summary")}})
            raise
        finally:
            self._busy = False

    async def _summarise(self, shadowed: list[dict[str, Any]], signal: "CancelToken") -> tuple[str, str, str, Any]:
        agent = self.agent
        target = self.routed_target() or (agent.options.provider, agent.options.model)
        provider_name = self.options.summary_provider or target[0]
        model = self.options.summary_model or target[1]
        provider = agent.providers.get(provider_name)
        if provider is None:
            raise CompactionError("summary", f"no provider named {provider_name!r}")
        header = self._last_header()
        instruction = {"role": "user", "id": new_message_id(), "source": "compaction",
                       "content": [{"type": "text", "text": SUMMARY_INSTRUCTION}]}
        request = ModelRequest(
            provider=provider_name, model=model, system=str(header.get("system") or ""),
            messages=(*shadowed, instruction), tools=tuple(header.get("tools") or ()),
            max_tokens=self.options.summary_max_tokens, session_id=agent.session_id, signal=signal,
            options={"purpose": "compaction-summary"},
        )
        self.summary_requests += 1
        asm = Assembler()

        async def consume() -> None:
            async for chunk in provider.stream(request):
                asm.feed(chunk)
                if asm.finish is not None:
                    return

        task = asyncio.ensure_future(consume())
        waiter = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=agent.options.cancel_grace_s)
            raise CompactionError("cancelled", "compaction was cancelled")
        exc = task.exception()
        if exc is not None:
            raise CompactionError("summary", str(exc)) from exc
        if asm.finish in ("error", "aborted"):
            raise CompactionError("summary", str((asm.failure or {}).get("message", "the summary call failed")))
        text = "".join(b["text"] for b in asm.content() if b.get("type") == "text")
        if not text.strip():
            raise CompactionError("summary", "the summary was empty")
        return text, provider_name, model, asm.usage

    # -------------------------------------------------------------- triggers

    async def _on_pre_step(self, p: dict[str, Any], next_: Any) -> Any:
        try:
            await self.pressure(p["turn"], p["signal"])
        except Exception:
            log.warning("compaction under pressure failed; continuing the turn", exc_info=True)
        return await next_()

    async def pressure(self, turn: int, signal: "CancelToken") -> None:
        target = self.routed_target()
        if target is None:
            return
        window = self.agent.context_window(*target)
        if not window:
            if target not in self._warned:
                self._warned.add(target)
                log.warning("no context window known for %s/%s; compaction pressure is off", *target)
            return
        o = self.options
        threshold = int(window * o.threshold_ratio)
        retain = o.retain_tokens if o.retain_tokens is not None else int(window * o.retain_ratio)
        retain = min(retain, threshold - 1)
        if self.measure() < threshold:
            return
        if o.prune and self.prune() and self.measure() < threshold:
            return
        for _ in range(o.compaction_retries + 1):
            if signal.aborted:
                return
            rng = self.select_range(retain)
            if rng is None:
                break
            await self.compact_region(rng, turn, signal)
            if self.measure() < threshold:
                return
        raise CompactionError("summary", "still above the threshold after compaction")

    async def _on_request_error(self, p: dict[str, Any], next_: Any) -> Any:
        signal = p["signal"]
        if p["failure"].get("code") != CONTEXT_WINDOW_EXCEEDED or signal.aborted:
            return await next_()
        if self.overflow_retries >= self.options.max_overflow_retries or self.routed_target() is None:
            return await next_()
        session = self.agent.session
        gen0 = session.replace_generation
        try:
            if self.options.prune:
                self.prune()
            rng = self.select_range(0)
            if rng is not None:
                await self.compact_region(rng, p["turn"], signal)
        except Exception:
            log.warning("overflow compaction failed", exc_info=True)
        if not signal.aborted and session.replace_generation > gen0:
            self.overflow_retries += 1
            return {"kind": "retry"}
        return await next_()

    # ----------------------------------------------------------------- manual

    async def compact_manual(self, signal: "CancelToken") -> dict[str, Any] | None:
        """Maintenance: summarise everything up to the last balanced cut."""
        if signal.aborted:
            raise CompactionError("cancelled", "compaction was cancelled")
        rng = self.select_range(0)
        if rng is None:
            return None  # a no-op writes nothing
        try:
            result = await self.compact_region(rng, None, signal)
        except CompactionError:
            raise
        except (Aborted, asyncio.CancelledError):
            raise CompactionError("cancelled", "compaction was cancelled") from None
        try:
            self.agent.session.flush()
        except OSError as e:
            raise CompactionError("persistence", str(e)) from e
        return result


def install_compaction(agent: "AgentHost") -> Compaction:
    c = Compaction(agent)
    c.install()
    return c


