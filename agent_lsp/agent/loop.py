"""One turn and its steps (R4, R5): the loop that `Agent`'s driver runs.

A turn claims its batch, assembles the system prompt, runs `agent/pre-step`,
then steps: `step/start` and the entered user messages, the request config
(`agent/request`), the logged header and route, the model stream (each chunk
logged and assembled), the assistant message, the tool calls
(ToolCallScheduler), `step/end`; it ends with `turn/end`. Hook points run
through `run_hook`, which gives listeners `cancel_grace_s` after a cancel.
`Agent` (agent.py) owns the inbox, the status, the driver task, cancel,
dispose and maintenance; this module owns what one turn does.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.agent.accounting import account_usage, last_session_usage, merge_usage
from agent_lsp.agent.cancellable import run_hook
from agent_lsp.agent.context_budget import raw_envelope_tokens
from agent_lsp.agent.events import complete_failure
from agent_lsp.agent.history import Assembler, derive_messages
from agent_lsp.agent.image_data import with_image_data
from agent_lsp.agent.inbox import Inbox, make_message
from agent_lsp.agent.model_stream import error_chain, stream_reply
from agent_lsp.agent.scheduler import ToolCallScheduler
from agent_lsp.agent.signal import Aborted, CancelToken
from agent_lsp.agent.workspace_part import envelope_text, leading_messages
import agent_lsp.llm.precedence as precedence
from agent_lsp.llm.types import LlmError, ModelProvider, ModelRequest

if TYPE_CHECKING:
    from agent_lsp.agent.handle import AgentHandle

log = logging.getLogger(__name__)

RUNTIME_CONTEXT_SOURCE = "runtime-context"


class TurnLoop:
    """The turn/step logic of one agent, and what its requests remember
    (the last logged header and route, the sticky routed config)."""

    def __init__(self, agent: AgentHandle, inbox: Inbox):
        self.agent = agent
        session = self.session = agent.session
        self.session_id = agent.session_id
        self.inbox = inbox
        self.options = agent.options
        self.hooks = agent.hooks
        self.providers = agent.providers
        self.tools = agent.tools
        self.emit = agent.emit
        self._first_request = True
        self.last_header: dict[str, Any] | None = None
        self._last_route: dict[str, Any] | None = None
        self._config: dict[str, Any] | None = None  # the routed call config, sticky across steps
        self.assembly: dict[str, Any] | None = None  # the system prompt and tools of the step being prepared
        self._started: Callable[[], None] = lambda: None  # the running turn's first chunk came
        for e in session.events.held(reverse=True):  # the chunks kept on disk are neither
            if e.type == "request/header" and self.last_header is None:
                self.last_header = e.data.get("header")
            if e.type == "request/context" and self._last_route is None:
                self._last_route = dict(e.data)
            if self.last_header is not None and self._last_route is not None:
                break
        self._snapshot_cache: tuple[int, int, str | None] | None = None
        self._session_usage: dict[str, Any] | None = None  # read from the log at the first turn's end

    # ------------------------------------------------------------------- turn

    async def run_turn(self, token: CancelToken, turn: int, batch: list[dict[str, Any]]) -> bool:
        """One turn (R4.2). True when the driver may go on to the next turn.

        Until its first chunk, and from a cancel to its end, the turn goes before
        the slices of other sessions' streams (`llm/precedence.py`): each of its
        steps waits for a loop turn, which those slices make long."""
        holds = [precedence.hold()]
        self._started = holds[0]  # released by the first chunk (`_stream`)
        off = token.on_abort(lambda _: holds.append(precedence.hold()))
        try:
            return await self._run_turn(token, turn, batch)
        finally:
            off()
            for release in holds:
                release()

    async def _run_turn(self, token: CancelToken, turn: int, batch: list[dict[str, Any]]) -> bool:
        ending: str | None = None
        turn_events_from = len(self.session.events)  # the turn's replies are logged after this
        hit_max_tokens = False
        steps = 0
        reason: dict[str, Any] | None = None
        step_now = 0
        try:
            k = 1
            while True:
                if k > 1 or ending is not None:
                    batch = self.inbox.claim(first_step=False, turn=turn)
                step_now = k
                assembly = await self._assemble(token, turn)
                token.raise_if_aborted()
                self.session.flush()  # checkpoint at each pre-step (R11.2)
                runtime = self._runtime_context_message()
                decision = await self.run_hook(
                    token,
                    "agent/pre-step",
                    {"messages": list(batch), "turn": turn, "step": k, "signal": token},
                    lambda p: {"kind": "enter", "messages": list(p["messages"]) + ([runtime] if runtime else [])},
                )
                token.raise_if_aborted()
                if not isinstance(decision, dict) or decision.get("kind") not in ("enter", "reject"):
                    raise TypeError(f"agent/pre-step returned an invalid decision: {decision!r}")
                if decision["kind"] == "reject":
                    reason = {"kind": "blocked"}
                    if decision.get("reason"):
                        reason["message"] = str(decision["reason"])
                    break
                entered = [self._entered_message(m) for m in decision.get("messages") or ()]
                if ending is not None and not entered:
                    break  # a continuation proposal with nothing to enter
                if k == 1 and not entered:
                    reason = {"kind": "completed"}
                    break
                outcome = await self._run_step(token, turn, k, entered, assembly)
                steps += 1
                k += 1
                if outcome == "max-tokens":
                    hit_max_tokens = True
                    ending = "max-tokens"
                else:
                    ending = outcome  # None: the model is owed another request
                if ending is not None and not self.inbox.has_next_step():
                    await self.run_hook(token, "agent/turn-stopping", {"turn": turn, "signal": token}, None)
                    token.raise_if_aborted()
                if ending is not None and not self.inbox.has_next_step():
                    break
            if reason is None:
                reason = {"kind": "max-tokens" if hit_max_tokens else (ending or "completed")}
        except Aborted as e:
            reason = {"kind": "aborted", "reason": token.reason or e.cause}
        except LlmError as e:
            if token.aborted:
                reason = {"kind": "aborted", "reason": token.reason}
            else:
                failure = complete_failure(e.failure)  # type: ignore[arg-type]
                reason = {"kind": "error", "error": failure}
                self.emit("agent/error", {"turn": turn, "step": step_now, "error": dict(failure)})
        except asyncio.CancelledError:
            self.session.append("turn/end", {"turn": turn, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}},
                                             **self._usage_of_turn(turn_events_from)})
            raise
        except Exception as e:
            if token.aborted:
                reason = {"kind": "aborted", "reason": token.reason}
            else:
                log.debug("turn %s failed", turn, exc_info=True)
                failure = {"message": error_chain(e), "code": "UNKNOWN"}
                reason = {"kind": "error", "error": failure}
                self.emit("agent/error", {"turn": turn, "step": step_now, "error": failure})
        self.session.append("turn/end", {"turn": turn, "reason": reason, **self._usage_of_turn(turn_events_from)})
        return reason["kind"] in ("completed", "max-tokens") and steps > 0

    def _usage_of_turn(self, start: int) -> dict[str, Any]:
        """`usage` (this turn's) and `sessionUsage` (the total so far) for `turn/end`."""
        events = self.session.events
        turn = account_usage(events[start:], self.options.cost_estimate)
        if self._session_usage is None:
            self._session_usage = last_session_usage(events[:start]) or account_usage(events[:start], self.options.cost_estimate)
        self._session_usage = merge_usage(self._session_usage, turn)
        return {"usage": turn, "sessionUsage": self._session_usage}

    @staticmethod
    def _entered_message(m: Any) -> dict[str, Any]:
        if isinstance(m, str):
            return make_message(m, source="plugin")
        if not isinstance(m, dict) or "content" not in m:
            raise TypeError(f"agent/pre-step entered an invalid message: {m!r}")
        if "id" not in m or "role" not in m:
            return make_message(m["content"], id=m.get("id"), source=m.get("source", "plugin"))
        return m

    def _runtime_context_message(self) -> dict[str, Any] | None:
        """The runtime-context snapshot, when it differs from the last one
        still on the surface (R4.5)."""
        render = self.options.runtime_context
        if render is None:
            return None
        text = render()
        if not text:
            return None
        if self._last_snapshot() == text:
            return None
        return make_message(text, source=RUNTIME_CONTEXT_SOURCE)

    def _last_snapshot(self) -> str | None:
        """Text of the latest runtime-context message on the surface; scans
        only what was appended since the last call unless the surface was
        replaced (compaction)."""
        session = self.session
        surface = session.surface
        cached = self._snapshot_cache
        if cached is None or cached[0] != session.replace_generation or cached[1] > len(surface):
            start, found = 0, None
        else:
            start, found = cached[1], cached[2]
        events = session.events
        for seq in surface[start:]:
            m = events[seq].data.get("message") or {}
            if m.get("source") == RUNTIME_CONTEXT_SOURCE:
                found = "".join(b.get("text", "") for b in m.get("content") or ())
        self._snapshot_cache = (session.replace_generation, len(surface), found)
        return found

    async def _assemble(self, token: CancelToken, turn: int) -> dict[str, Any]:
        sp = self.options.system_prompt
        base = sp() if callable(sp) else sp
        payload = {"turn": turn, "signal": token, "system": base or "", "tools": self.tools.specs()}
        result = await self.run_hook(
            token,
            "system-prompt/assemble", payload, lambda p: {"system": p["system"], "tools": p["tools"]}
        )
        self.assembly = result if isinstance(result, dict) else None
        return result

    # ------------------------------------------------------------------- step

    async def _run_step(
        self, token: CancelToken, turn: int, step: int, entered: list[dict[str, Any]], assembly: dict[str, Any]
    ) -> str | None:
        append = self.session.append
        append("step/start", {"turn": turn, "step": step})
        try:
            for m in entered:
                append("user/message", {"turn": turn, "step": step, "message": m, "surfaceOp": "append"})
            return await self._step_body(token, turn, step, assembly)
        finally:
            append("step/end", {"turn": turn, "step": step})

    async def _step_body(self, token: CancelToken, turn: int, step: int, assembly: dict[str, Any]) -> str | None:
        attempt = 0
        while True:
            token.raise_if_aborted()
            config = await self._request_config(token, turn, step)
            token.raise_if_aborted()
            provider_name, model = config.get("provider"), config.get("model")
            if not provider_name or not model:
                raise ValueError("the request has no provider or model")
            provider = self.providers.get(provider_name)
            if provider is None:
                raise LlmError({"code": "MODEL_UNAVAILABLE", "message": f"no provider named {provider_name!r}",
                                "provider": provider_name, "model": model})
            system = assembly.get("system") or ""
            tools = tuple(assembly.get("tools") or ())
            header = {
                "provider": provider_name,
                "model": model,
                "system": system,
                "tools": list(tools),
                "maxTokens": config.get("maxTokens"),
                "temperature": config.get("temperature"),
            }
            if assembly.get("workspace"):  # the folder's part, sent as the first message
                header["workspace"] = assembly["workspace"]
            self._log_header(header)
            self._log_route(provider, provider_name, model, raw_envelope_tokens(envelope_text(header), tools))
            request = ModelRequest(
                provider=provider_name,
                model=model,
                system=system,
                messages=(*leading_messages(assembly),
                          *with_image_data(derive_messages(self.session), self.session.files,
                                           self.options.compaction.image_turns)),
                tools=tools,
                max_tokens=config.get("maxTokens"),
                temperature=config.get("temperature"),
                session_id=self.session_id,
                signal=token,
                options=dict(config.get("options") or {}),
            )
            self.session.flush()  # checkpoint before each adapter dispatch (R11.2)
            asm, seqs = await stream_reply(token, provider, request, turn, step, append=self.session.append,
                                           hooks=self.hooks, started=self._started, grace_s=self.options.cancel_grace_s)
            failed = asm.finish in ("error", "aborted")
            if token.aborted:
                if not failed:
                    self._write_interrupted(turn, step, asm, seqs, provider_name, model)
                raise Aborted(token.reason)
            if failed:
                failure = complete_failure(asm.failure or {"code": "UNKNOWN", "message": "the stream failed"})
                attempt += 1
                try:
                    action = await self.run_hook(
                        token,
                        "agent/request-error",
                        {"turn": turn, "step": step, "provider": provider_name, "model": model,
                         "failure": failure, "attempt": attempt, "signal": token},
                        lambda p: None,
                    )
                except LlmError:
                    raise  # a listener's own failure replaces the server's (it says what to do)
                except Exception:
                    log.exception("agent/request-error listener failed; the failure is terminal")
                    action = None
                token.raise_if_aborted()  # cancellation beats a retry action
                if isinstance(action, dict) and action.get("kind") == "retry":
                    continue
                raise LlmError(failure)  # type: ignore[arg-type]
            return await self._finish_step(token, turn, step, asm, seqs, provider_name, model)

    async def _finish_step(self, token: CancelToken, turn: int, step: int, asm: Assembler, seqs: list[int],
                           provider_name: str, model: str) -> str | None:
        max_tokens = asm.finish == "max-tokens"
        content = asm.content(complete_calls_only=max_tokens)
        data: dict[str, Any] = {
            "turn": turn,
            "step": step,
            "message": {"role": "assistant", "content": content, "provider": provider_name, "model": model},
        }
        if asm.usage is not None:
            data["usage"] = asm.usage
        data["surfaceOp"] = "append"
        data["sourceEventSeqs"] = seqs
        self.session.append("assistant/message", data)
        calls = [b for b in content if b.get("type") == "tool-call"]
        if max_tokens and not calls:
            return "max-tokens"
        if not calls:
            return "completed"
        # A reply cut while it wrote tool calls: the complete ones run and the
        # model, seeing their results, goes on (and may redo the cut one).
        concluded = await ToolCallScheduler(self.agent, token, turn, step, calls).run()
        return "completed" if concluded else None

    def _write_interrupted(self, turn: int, step: int, asm: Assembler, seqs: list[int], provider_name: str,
                           model: str) -> None:
        prefix = asm.visible_prefix()
        if not prefix:
            return  # R5.5: nothing visible was delivered
        data: dict[str, Any] = {
            "turn": turn,
            "step": step,
            "message": {"role": "assistant", "content": prefix, "provider": provider_name, "model": model},
            "interrupted": True,
        }
        if asm.usage is not None:
            data["usage"] = asm.usage
        data["surfaceOp"] = "append"
        data["sourceEventSeqs"] = list(seqs)
        self.session.append("assistant/message", data)

    async def _request_config(self, token: CancelToken, turn: int, step: int) -> dict[str, Any]:
        seed = self._config or {
            "provider": self.options.provider,
            "model": self.options.model,
            "maxTokens": self.options.max_tokens,
            "temperature": self.options.temperature,
        }
        if self._config is None and self.options.reasoning_effort:
            seed["options"] = {"reasoningEffort": self.options.reasoning_effort}
        result = await self.run_hook(
            token,
            "agent/request", {"config": dict(seed), "turn": turn, "step": step, "signal": token},
            lambda p: p["config"],
        )
        if not isinstance(result, dict):
            raise TypeError(f"agent/request returned an invalid config: {result!r}")
        self._config = dict(result)
        return self._config

    def forget_route(self) -> None:
        """The next step's request is routed afresh from the options (a model switch)."""
        self._config = None

    def _log_header(self, header: dict[str, Any]) -> None:
        if self._first_request:
            reason = "resume" if self.session.resumed else "initial"
            self._first_request = False
        elif header != self.last_header:
            reason = "change"
        else:
            return
        self.session.append("request/header", {"header": header, "reason": reason})
        self.last_header = header

    def next_route(self) -> tuple[str, str]:
        """(provider, model) of the next request: the sticky routed config, or
        the options when none is routed yet (the first request, a model switch)."""
        config = self._config
        if config and config.get("provider") and config.get("model"):
            return str(config["provider"]), str(config["model"])
        return self.options.provider, self.options.model

    def model_info(self, provider_name: str, model: str) -> Any:
        provider = self.providers.get(provider_name)
        if provider is None:
            return None
        try:
            return provider.model_info(model)
        except Exception:
            return None

    def context_window(self, provider_name: str, model: str) -> int | None:
        override = self.options.compaction.context_window
        if override:
            return override
        info = self.model_info(provider_name, model)
        return getattr(info, "context_window", None)

    def _log_route(self, provider: ModelProvider, provider_name: str, model: str, fixed: int) -> None:
        route: dict[str, Any] = {"provider": provider_name, "model": model}
        window = self.context_window(provider_name, model)
        if window is not None:
            route["contextWindow"] = window
        route["fixedTokens"] = fixed
        if route != self._last_route:
            self.session.append("request/context", route)
            self._last_route = route

    async def run_hook(self, token: CancelToken, name: str, payload: dict[str, Any],
                       terminal: Callable[[Any], Any] | None) -> Any:
        """Run a waterfall (or, with no terminal, a serial point), cancellable (agent/cancellable.py)."""
        return await run_hook(self.hooks, self.options.cancel_grace_s, token, name, payload, terminal)
