"""Compaction (R10): a plugin on the hook bus, not part of the loop spine.

The request about to be sent must fit the context window with room for the
reply. Its size is estimated (agent/context_budget.py: characters / 4,
calibrated by the server's reported usage) with the messages about to enter
included: the claimed inbox, the runtime context, the tool results of the
last step.

- Pressure, in `agent/pre-step` (before `step/start`, inside the open turn):
  when the request would exceed `threshold_ratio` of the window (or leave the
  reply less than its room), old tool results are shrunk first, then the
  oldest part of the surface is summarised (keeping about `retain` tokens,
  then none), then the newest tool results are shrunk. All of it is one
  `compaction/start` ... `compaction/end` bracket, which clients show. A
  window too small for the fixed prompt (system prompt and tool schemas), or
  a request that still does not fit, ends the turn with a
  CONTEXT_WINDOW_EXCEEDED error that says what to do: nothing is sent that
  the server would reject, and nothing loops.
- Overflow, in `agent/request-error`, for CONTEXT_WINDOW_EXCEEDED only: the
  rejection calibrates the estimate (and teaches the window, when the server
  names it), then the same fitting runs; the request is retried iff the
  surface replacement generation advanced (the proof of progress).
- Manual `compact_now()`: a maintenance task between turns (retain 0, a
  standalone bracket with `turn: null`).

The summary (agent/summary.py) is one request when the conversation fits
the window with the fixed prompt, else it is made in pieces that fit; the
rejected request is never what is sent to be summarised. The summary
transaction never splits an assistant tool call from its result: ranges end
at balanced cuts only.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any, Iterable

from agent_lsp.agent import summary as summaries
from agent_lsp.agent.summary import CompactionError
from agent_lsp.agent.context_window import PENDING_WINDOW, PROBE_WAIT_S, ContextWindows
from agent_lsp.agent.context_budget import (
    CHARS_PER_TOKEN,
    SurfaceTally,
    TokenEstimate,
    raw_envelope_tokens,
    raw_message_tokens,
)
from agent_lsp.agent.history import derive_messages
from agent_lsp.agent.image_data import IMAGE_TOKENS, dropped_images_note, images_sent
from agent_lsp.agent.inbox import new_message_id
from agent_lsp.agent.signal import Aborted
from agent_lsp.agent.workspace_part import envelope_text
from agent_lsp.agent.surface_cuts import PRUNE_MARKER, last_reply_at, message_of, prune_results, select_range
from agent_lsp.llm.types import CONTEXT_WINDOW_EXCEEDED, LlmError, LlmFailure, ModelRequest

if TYPE_CHECKING:
    from agent_lsp.agent.handle import AgentHandle
    from agent_lsp.agent.signal import CancelToken

log = logging.getLogger(__name__)

CHECKPOINT_HEADER = "[RECOVERY CHECKPOINT] Summary of the earlier conversation, which was compacted:\n\n"
SUMMARY_INSTRUCTION = summaries.SUMMARY_INSTRUCTION


def estimate_tokens(message: dict[str, Any]) -> int:
    """Raw (uncalibrated) tokens of one message."""
    return raw_message_tokens(message)


def _as_message(m: Any) -> dict[str, Any]:
    if isinstance(m, str):
        return {"role": "user", "content": [{"type": "text", "text": m}]}
    return m if isinstance(m, dict) else {}


class _Bracket:
    """One compaction's `compaction/start` ... `compaction/end`, opened at its first change."""

    def __init__(self, owner: "Compaction", turn: int | None):
        self.owner = owner
        self.turn = turn
        self.compaction_id: str | None = None
        self.start_seq = -1
        self.summarised = False

    def open(self) -> str:
        if self.compaction_id is None:
            if self.owner._busy:
                raise CompactionError("busy", "a compaction is already running")
            self.owner._busy = True
            self.compaction_id = f"cmp_{secrets.token_hex(4)}"
            self.start_seq = self.owner.agent.session.append(
                "compaction/start", {"compactionId": self.compaction_id, "turn": self.turn}).seq
        return self.compaction_id

    def close(self, error: BaseException | None = None) -> None:
        if self.compaction_id is None:
            return
        data: dict[str, Any] = {"compactionId": self.compaction_id, "turn": self.turn}
        if error is not None:
            data["error"] = {"message": str(error) or type(error).__name__, "kind": getattr(error, "kind", "summary")}
        agent = self.owner.agent
        agent.session.append("compaction/end", data)
        self.owner._busy = False
        if self.summarised and error is None:
            # The history now starts from a checkpoint: plugins that re-inject
            # context at a session start hear it (R8, source "compact").
            agent.emit("agent/session-start", {"source": "compact", "sessionId": agent.session_id,
                                               "compactionId": self.compaction_id})
        self.compaction_id = None


class Compaction:
    def __init__(self, agent: "AgentHandle"):
        self.agent = agent
        self.options = agent.options.compaction
        self.overflow_retries = 0
        self._busy = False
        self.summary_requests = 0
        self.estimate = TokenEstimate()
        self._tally = SurfaceTally()
        self.windows = ContextWindows(agent)
        self._refusal: Any = None  # unregisters the listener that fails the step's request

    # ---------------------------------------------------------------- install

    def install(self) -> None:
        hooks = self.agent.hooks
        hooks.register("agent/pre-step", self._on_pre_step)
        hooks.register("agent/request-error", self._on_request_error)
        self.agent.session.subscribe(self._on_event)
        self.agent.idle_listeners.append(self._reset_budget)
        self.windows.ask_soon()

    def _reset_budget(self) -> None:
        self.overflow_retries = 0

    def _on_event(self, event: Any) -> None:
        if event.type != "assistant/message":
            return
        if not event.data.get("interrupted"):
            self.overflow_retries = 0
        usage = event.data.get("usage") or {}
        actual = int(usage.get("inputTokens") or 0)
        if actual > 0:  # calibrate: the server's count of the request this reply answered (the surface before it)
            header = self.agent.last_header or {}
            raw = raw_envelope_tokens(envelope_text(header), header.get("tools") or ())
            raw += self._tally.raw(self.agent.session) - self.estimate.raw_of_event(event) + self._image_raw()
            self.estimate.observe(actual, raw)

    # ---------------------------------------------------------------- measure

    def _last_header(self) -> dict[str, Any]:
        return self.agent.last_header or {}

    def _envelope(self) -> tuple[str, tuple[Any, ...]]:
        """The fixed prompt of the next request: the step's assembly, else the last header's."""
        source = self.agent.assembly or self._last_header()
        return envelope_text(source), tuple(source.get("tools") or ())

    def _trigger_of(self, window: int, target: tuple[str, str]) -> int:
        """Pressure starts here: `threshold_ratio` of the window, or the budget (window less the reply's room)."""
        return min(int(window * self.options.threshold_ratio), window - self.windows.reserve(window, target))

    def measure(self, extra: Iterable[dict[str, Any]] = ()) -> int:
        """Estimated tokens of the next request: the fixed prompt, the surface
        and the messages about to enter (`extra`), calibrated."""
        system, tools = self._envelope()
        extra = list(extra)
        raw = self.estimate.raw_request(system, tools, (), extra) + self._tally.raw(self.agent.session)
        return self.estimate.scale(raw + self._image_raw(extra))

    def _image_raw(self, extra: Iterable[dict[str, Any]] = ()) -> int:
        """What the images the next request sends cost (those of the last
        `image_turns` user messages, agent/image_data.py), as raw tokens."""
        messages = derive_messages(self.agent.session) + list(extra)
        return IMAGE_TOKENS * images_sent(messages, self.options.image_turns)

    def _fixed(self) -> int:
        system, tools = self._envelope()
        return self.estimate.scale(raw_envelope_tokens(system, tools))

    # ------------------------------------------------------- prune, select

    def prune(self, threshold: int | None = None, *, upto: int | None = None,
              bracket: _Bracket | None = None) -> int:
        """Prune the tool results on the surface (before position `upto`, when
        given) longer than `threshold` characters (default: the option) to
        head + marker + tail. Idempotent. Returns how many were pruned."""
        o = self.options
        if threshold is None or threshold >= o.prune_threshold_chars:
            threshold, head, tail = o.prune_threshold_chars, o.prune_head_chars, o.prune_tail_chars
        else:
            threshold = max(64, threshold)
            head = max(0, (threshold - len(PRUNE_MARKER)) * 4 // 5)
            tail = max(0, threshold - len(PRUNE_MARKER) - head)
        return prune_results(self.agent.session, threshold, head, tail, upto=upto,
                             before_first=bracket.open if bracket is not None else lambda: None)

    def _chars(self, tokens: int) -> int:
        return int(tokens * CHARS_PER_TOKEN / self.estimate.ratio)

    def select_range(self, retain: int) -> list[int] | None:
        return select_range(self.agent.session, retain)

    # ----------------------------------------------------------- transaction

    async def compact_region(self, rng: list[int], turn: int | None, signal: "CancelToken",
                             window: int | None = None) -> dict[str, Any]:
        """Summarise `rng` in a bracket of its own; raises on failure (after `compaction/end` with the error)."""
        bracket = _Bracket(self, turn)
        try:
            result = await self._summarise_range(bracket, rng, turn, signal, window)
        except BaseException as e:
            bracket.close(e)
            raise
        bracket.close()
        return result

    async def _summarise_range(self, bracket: _Bracket, rng: list[int], turn: int | None, signal: "CancelToken",
                               window: int | None) -> dict[str, Any]:
        compaction_id = bracket.open()
        session = self.agent.session
        surface_before = list(session.surface)
        events = session.events
        shadowed = [m for s in rng if (m := message_of(events[s]))]
        shadowed_tokens = sum(estimate_tokens(m) for m in shadowed)
        summary, provider_name, model, usage = await self._summarise(shadowed, signal, window)
        framed = CHECKPOINT_HEADER + summary.strip() + dropped_images_note(shadowed)
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
            "sourceEventSeqs": [bracket.start_seq, summary_event.seq, *rng],
        })
        bracket.summarised = True
        return {"compactionId": compaction_id, "shadowedSeqs": list(rng), "shadowedTokenCount": shadowed_tokens}

    async def _summarise(self, shadowed: list[dict[str, Any]], signal: "CancelToken",
                         window: int | None) -> tuple[str, str, str, Any]:
        agent = self.agent
        target = agent.next_route()
        provider_name = self.options.summary_provider or target[0]
        model = self.options.summary_model or target[1]
        provider = agent.providers.get(provider_name)
        if provider is None:
            raise CompactionError("summary", f"no provider named {provider_name!r}")
        system, tools = self._envelope()
        if window:
            reserve = min(self.options.summary_max_tokens or self.windows.reserve(window, target), max(1, window // 4))
        else:
            reserve = self.options.summary_max_tokens or 0

        async def call(system: str, messages: tuple[dict[str, Any], ...], tools: tuple[Any, ...],
                       max_tokens: int | None) -> tuple[str, Any]:
            request = ModelRequest(
                provider=provider_name, model=model, system=system, messages=messages, tools=tools,
                max_tokens=max_tokens, session_id=agent.session_id, signal=signal,
                options={"purpose": "compaction-summary"},
            )
            return await summaries.stream_text(provider, request, signal, agent.options.cancel_grace_s)

        text, usage, requests = await summaries.summarise(
            call, self.estimate, shadowed, system=system, tools=tools, window=window, reserve=reserve,
            max_tokens=self.options.summary_max_tokens)
        self.summary_requests += requests
        return text, provider_name, model, usage

    # ------------------------------------------------------------------- fit

    async def fit(self, turn: int | None, signal: "CancelToken", extra: Iterable[dict[str, Any]] = (), *,
                  target: tuple[str, str] | None = None) -> bool:
        """Make the next request (the surface and `extra`, about to enter)
        fit its window with room for the reply. True when the surface was
        changed. Raises LlmError (CONTEXT_WINDOW_EXCEEDED, saying what to do)
        when the fixed prompt leaves no room, or the request still would not fit."""
        extra = list(extra)
        target = target or self.agent.next_route()
        window, stand_in = await self.windows.now(target)
        if stand_in and self.measure(extra) >= self._trigger_of(PENDING_WINDOW, target):
            # Compacting loses context the real window may hold: worth waiting for the server's answer.
            window, stand_in = await self.windows.now(target, PROBE_WAIT_S)
            if stand_in:
                return False
        if not window:
            self.windows.warn_unknown(target)
            return False
        o = self.options
        reserve = self.windows.reserve(window, target)
        limit = window - reserve
        trigger = self._trigger_of(window, target)
        fixed = self._fixed()
        if fixed >= limit:
            if stand_in:
                return False  # the real window may well hold it: the next step knows
            raise LlmError(self._does_not_fit(target, window, fixed, reserve, None, None))
        if self.measure(extra) < trigger:
            return False
        session = self.agent.session
        gen0 = session.replace_generation
        room = limit - fixed
        bracket = _Bracket(self, turn)
        error: BaseException | None = None
        try:
            old_cap, new_cap = self._chars(max(32, room // 8)), self._chars(max(64, room // 3))
            newest = last_reply_at(self.agent.session)
            if o.prune and newest > 0:  # old tool results first: the model has seen them
                self.prune(old_cap, upto=newest, bracket=bracket)
            if o.prune and self.measure(extra) >= trigger:  # a new one too large for any room left
                self.prune(new_cap, bracket=bracket)
            if self.measure(extra) >= trigger:
                retain = o.retain_tokens if o.retain_tokens is not None else int(window * o.retain_ratio)
                for keep in dict.fromkeys((min(retain, max(0, (trigger - fixed) // 2)), 0)):
                    if signal.aborted:
                        break
                    rng = self.select_range(keep)
                    if rng is None:
                        continue
                    try:
                        await self._summarise_range(bracket, rng, turn, signal, window)
                    except CompactionError as e:
                        if e.kind == "cancelled":
                            raise
                        log.warning("compaction's summary failed: %s", e)
                        error = e
                        break
                    if self.measure(extra) < trigger:
                        break
            if o.prune and self.measure(extra) > limit:  # the last resort: every result to the old ones' size
                self.prune(old_cap, bracket=bracket)
        except (Aborted, asyncio.CancelledError) as e:
            bracket.close(CompactionError("cancelled", "compaction was cancelled"))
            if isinstance(e, asyncio.CancelledError):
                raise
            return session.replace_generation > gen0
        except CompactionError as e:
            if e.kind == "cancelled":
                bracket.close(e)
                return session.replace_generation > gen0
            log.warning("compaction failed: %s", e)
            error = e
        except Exception as e:
            log.warning("compaction failed", exc_info=True)
            error = e
        bracket.close(error)
        if signal.aborted:
            return session.replace_generation > gen0
        now = self.measure(extra)
        if now > limit and not stand_in:
            raise LlmError(self._does_not_fit(target, window, fixed, reserve, now, error))
        return session.replace_generation > gen0

    def _does_not_fit(self, target: tuple[str, str], window: int, fixed: int, reserve: int, now: int | None,
                      error: BaseException | None) -> LlmFailure:
        tools = len(self._envelope()[1])
        refused = self.windows.refused.get(target)
        size = f"{window} tokens" if refused is None else f"less than the {refused} tokens of a request it refused"
        if now is None:
            message = (f"The model's context window ({size}) is too small for this agent: the system prompt "
                       f"and {tools} tool descriptions take about {fixed} tokens, and a reply needs {reserve} more. "
                       "Run the model with a larger context (the server's context size setting), "
                       "or use a model with a larger window, or offer fewer tools (the toolSet setting \"small\").")
        else:
            message = (f"The conversation does not fit the model's context window ({size}) even after "
                       f"compaction: the next request would take about {now} tokens (the system prompt and {tools} "
                       f"tool descriptions about {fixed}), and a reply needs {reserve} more. Start a new session, "
                       "send a shorter message, run the model with a larger context, or offer fewer tools.")
            images = images_sent(derive_messages(self.agent.session), self.options.image_turns)
            if images:
                message += (f" The images of the last messages ({images}) take about "
                            f"{self.estimate.scale(images * IMAGE_TOKENS)} tokens of it: send fewer or smaller ones.")
            if error is not None:
                message += f" (Compacting failed: {error}.)"
        return {"code": CONTEXT_WINDOW_EXCEEDED, "message": message, "provider": target[0], "model": target[1],
                "retryable": False}

    # -------------------------------------------------------------- triggers

    async def _on_pre_step(self, p: dict[str, Any], next_: Any) -> Any:
        decision = await next_()
        if not isinstance(decision, dict) or decision.get("kind") != "enter":
            return decision
        extra = [_as_message(m) for m in decision.get("messages") or ()]
        self._refuse_next(None)
        try:
            await self.fit(p["turn"], p["signal"], extra)
        except LlmError as e:
            self._refuse_next(e)
        except Aborted:
            raise
        except Exception:
            log.warning("compaction under pressure failed; continuing the turn", exc_info=True)
        return decision

    def _refuse_next(self, error: LlmError | None) -> None:
        """Fail the step's request with `error` (None: forget one pending). The
        step still starts, so the user's message enters the history and is
        kept, as with a failure the server reports; nothing is sent."""
        if self._refusal is not None:
            self._refusal()
            self._refusal = None
        if error is None:
            return

        def refuse(p: dict[str, Any], next_: Any) -> Any:
            self._refuse_next(None)
            raise error

        self._refusal = self.agent.hooks.register("agent/request", refuse, first=True)

    async def _on_request_error(self, p: dict[str, Any], next_: Any) -> Any:
        signal = p["signal"]
        failure = p["failure"]
        if failure.get("code") != CONTEXT_WINDOW_EXCEEDED or signal.aborted:
            return await next_()
        if self.overflow_retries >= self.options.max_overflow_retries:
            return await next_()
        target = (str(p.get("provider")), str(p.get("model")))
        session = self.agent.session
        gen0 = session.replace_generation
        self._learn(target, failure)
        if self.windows.known(target):
            try:
                await self.fit(p["turn"], signal, target=target)
            except LlmError:
                raise  # it says what to do, where the server's refusal does not
            except Exception:
                log.warning("overflow compaction failed", exc_info=True)
        if not signal.aborted and session.replace_generation > gen0:
            self.overflow_retries += 1
            return {"kind": "retry"}
        return await next_()

    def _learn(self, target: tuple[str, str], failure: dict[str, Any]) -> None:
        """What a rejection says: the size the server counted calibrates the
        estimate; the window is learned (agent/context_window.py)."""
        session = self.agent.session
        system, tools = self._envelope()
        raw = raw_envelope_tokens(system, tools) + self._tally.raw(session) + self._image_raw()
        prompt = failure.get("promptTokens")
        if isinstance(prompt, int) and prompt > 0:
            self.estimate.observe(prompt, raw)
        self.windows.learn(target, failure.get("contextWindow"), self.estimate.scale(raw))

    # ----------------------------------------------------------------- manual

    async def compact_manual(self, signal: "CancelToken") -> dict[str, Any] | None:
        """Maintenance: summarise everything up to the last balanced cut."""
        if signal.aborted:
            raise CompactionError("cancelled", "compaction was cancelled")
        rng = self.select_range(0)
        if rng is None:
            return None  # a no-op writes nothing
        try:
            result = await self.compact_region(rng, None, signal, self.windows.known(self.agent.next_route()))
        except CompactionError:
            raise
        except (Aborted, asyncio.CancelledError):
            raise CompactionError("cancelled", "compaction was cancelled") from None
        try:
            self.agent.session.flush()
        except OSError as e:
            raise CompactionError("persistence", str(e)) from e
        return result


def install_compaction(agent: "AgentHandle") -> Compaction:
    c = Compaction(agent)
    c.install()
    return c


