"""The agent: a live handle that drives one session (R2–R7).

A waking send on an idle agent starts the driver synchronously: the status
flips to running, `turn/start` is appended and the first batch is claimed
before `followup()` returns (R3.3). The rest of the turn runs in one
asyncio task (the driver), turn after turn while work is pending.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Awaitable, Callable

from agent_lsp.agent.accounting import WorkAccount, account_work
from agent_lsp.agent.hooks import HookBus
from agent_lsp.agent.history import Assembler, derive_messages
from agent_lsp.agent.inbox import NEXT_STEP, NEXT_TURN, Inbox, make_message
from agent_lsp.agent.options import AgentOptions
from agent_lsp.agent.registry import ToolRegistry
from agent_lsp.agent.scheduler import ToolCallScheduler
from agent_lsp.agent.signal import Aborted, CancelToken, normalize_cause
from agent_lsp.llm.types import LlmError, ModelProvider, ModelRequest
from agent_lsp.store.session import Session

log = logging.getLogger(__name__)

RUNTIME_CONTEXT_SOURCE = "runtime-context"


class AgentDisposedError(RuntimeError):
    pass


class AgentBusyError(RuntimeError):
    pass


def _error_chain(e: BaseException) -> str:
    parts = []
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        parts.append(f"{type(cur).__name__}: {cur}" if str(cur) else type(cur).__name__)
        cur = cur.__cause__ or cur.__context__
    return " <- ".join(parts)


class Agent:
    def __init__(
        self,
        session: Session,
        *,
        providers: dict[str, ModelProvider],
        tools: ToolRegistry | None = None,
        options: AgentOptions,
        listeners: dict[str, Callable[[dict[str, Any]], Any] | list[Callable[[dict[str, Any]], Any]]] | None = None,
        start_source: str | None = None,
    ):
        """`listeners` are live-event listeners registered before anything is
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
        self._listeners: dict[str, list[Callable[[dict[str, Any]], Any]]] = {}
        self._emit_queue: deque[tuple[str, dict[str, Any]]] = deque()
        self._emitting = False
        self.inbox = Inbox(session, self._emit)
        # R2.12: only splices after the header's seedLength (a fork's inherited
        # prefix) rebuild the inbox: a parent's pending work is not the child's.
        self.inbox.rebuild(session.events[session.inherited_length:])
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
        self._first_request = True
        self._last_header: dict[str, Any] | None = None
        self._last_route: dict[str, Any] | None = None
        self._config: dict[str, Any] | None = None  # the routed call config, sticky across steps
        for e in reversed(session.events):
            if e.type == "request/header" and self._last_header is None:
                self._last_header = e.data.get("header")
            if e.type == "request/context" and self._last_route is None:
                self._last_route = dict(e.data)
            if self._last_header is not None and self._last_route is not None:
                break
        self._snapshot_cache: tuple[int, int, str | None] | None = None
        self.idle_listeners: list[Callable[[], Any]] = []
        for name, fns in (listeners or {}).items():
            for fn in fns if isinstance(fns, (list, tuple)) else [fns]:
                self.on(name, fn)
        self._install_plugins()
        self._emit("agent/created", {"agentId": self.id, "sessionId": self.session_id})
        source = start_source or ("resume" if session.resumed else "startup")
        self._emit("agent/session-start", {"source": source, "sessionId": self.session_id})

    def _install_plugins(self) -> None:
        from agent_lsp.agent.compaction import install_compaction
        from agent_lsp.agent.retry import install_fallback, install_retry

        if self.options.retry.enabled:
            install_retry(self)
        if self.options.fallback_provider or self.options.fallback_model:
            install_fallback(self)
        if self.options.compaction.enabled:
            self.compaction = install_compaction(self)
        else:
            self.compaction = None

    # ------------------------------------------------------------ live events

    def on(self, name: str, fn: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        listeners = self._listeners.setdefault(name, [])
        listeners.append(fn)

        def off() -> None:
            if fn in listeners:
                listeners.remove(fn)

        return off

    def _emit(self, name: str, payload: dict[str, Any]) -> None:
        """Deliver a live event to its listeners. An event emitted from inside
        a listener is queued behind the one being delivered, so every
        listener sees the same order (a status never appears to repeat)."""
        if not self._listeners.get(name):
            return
        self._emit_queue.append((name, payload))
        if self._emitting:
            return
        self._emitting = True
        try:
            while self._emit_queue:
                name, payload = self._emit_queue.popleft()
                for fn in tuple(self._listeners.get(name, ())):
                    try:
                        fn(payload)
                    except Exception:  # emit: listener errors are contained
                        log.exception("listener for %s failed", name)
        finally:
            self._emitting = False

    @property
    def status(self) -> str:
        return self._status

    def _set_status(self, status: str) -> None:
        if status == self._status:
            return  # never repeats (R3.2)
        self._status = status
        self._emit("agent/status", {"status": status})

    def derive_messages(self) -> list[dict[str, Any]]:
        return derive_messages(self.session)

    def consumed_work(self, *, start: int = 0) -> WorkAccount:
        """Consumed-work accounting over this session's log from seq `start` (R2.13)."""
        return account_work(self.session.events, start=start)

    # ------------------------------------------------------------------ inbox

    def followup(self, content: str | list[dict[str, Any]], *, id: str | None = None, source: str = "user",
                 context: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self._send(make_message(content, id=id, source=source, context=context), NEXT_TURN, True)

    def steer(self, content: str | list[dict[str, Any]], *, id: str | None = None, source: str = "user",
              context: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self._send(make_message(content, id=id, source=source, context=context, delivery="steer"), NEXT_STEP, True)

    def inject(self, content: str | list[dict[str, Any]], *, id: str | None = None, source: str = "user",
               context: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self._send(make_message(content, id=id, source=source, context=context, delivery="inject"), NEXT_STEP, False)

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
        if self._disposing:
            return message  # queued durably; never started or latched during disposal
        if token is None and not self._maintenance:
            self._start_driver()
        elif aborted or self._maintenance:
            cause = token.reason if token is not None else None
            if not (cause and cause.get("kind") == "disposed"):
                self._wake_latched = True  # R7.6
        return message

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
                go_on = await self._run_turn(token, turn, batch)
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
            self._emit("agent/error", {"turn": turn, "step": None,
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

    # ------------------------------------------------------------------- turn

    async def _run_turn(self, token: CancelToken, turn: int, batch: list[dict[str, Any]]) -> bool:
        """One turn (R4.2). True when the driver may go on to the next turn."""
        ending: str | None = None
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
                decision = await self._hook(
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
                    await self._hook(token, "agent/turn-stopping", {"turn": turn, "signal": token}, None)
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
                reason = {"kind": "error", "error": dict(e.failure)}
                self._emit("agent/error", {"turn": turn, "step": step_now, "error": dict(e.failure)})
        except asyncio.CancelledError:
            self.session.append("turn/end", {"turn": turn, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}})
            raise
        except Exception as e:
            if token.aborted:
                reason = {"kind": "aborted", "reason": token.reason}
            else:
                log.debug("turn %s failed", turn, exc_info=True)
                failure = {"message": _error_chain(e), "code": "UNKNOWN"}
                reason = {"kind": "error", "error": failure}
                self._emit("agent/error", {"turn": turn, "step": step_now, "error": failure})
        self.session.append("turn/end", {"turn": turn, "reason": reason})
        return reason["kind"] in ("completed", "max-tokens") and steps > 0

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
        result = await self._hook(
            token,
            "system-prompt/assemble", payload, lambda p: {"system": p["system"], "tools": p["tools"]}
        )
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
            self._log_header(header)
            self._log_route(provider, provider_name, model)
            request = ModelRequest(
                provider=provider_name,
                model=model,
                system=system,
                messages=tuple(derive_messages(self.session)),
                tools=tools,
                max_tokens=config.get("maxTokens"),
                temperature=config.get("temperature"),
                session_id=self.session_id,
                signal=token,
                options=dict(config.get("options") or {}),
            )
            self.session.flush()  # checkpoint before each adapter dispatch (R11.2)
            asm, seqs = await self._stream(token, provider, request, turn, step)
            failed = asm.finish in ("error", "aborted")
            if token.aborted:
                if not failed:
                    self._write_interrupted(turn, step, asm, seqs, provider_name, model)
                raise Aborted(token.reason)
            if failed:
                failure = dict(asm.failure or {"code": "UNKNOWN", "message": "the stream failed"})
                failure.setdefault("code", "UNKNOWN")
                failure.setdefault("message", failure["code"])
                attempt += 1
                try:
                    action = await self._hook(
                        token,
                        "agent/request-error",
                        {"turn": turn, "step": step, "provider": provider_name, "model": model,
                         "failure": failure, "attempt": attempt, "signal": token},
                        lambda p: None,
                    )
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
        content = asm.content(drop_tool_calls=max_tokens)
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
        if max_tokens:
            return "max-tokens"
        calls = [b for b in content if b.get("type") == "tool-call"]
        if not calls:
            return "completed"
        concluded = await ToolCallScheduler(self, token, turn, step, calls).run()
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
        result = await self._hook(
            token,
            "agent/request", {"config": dict(seed), "turn": turn, "step": step, "signal": token},
            lambda p: p["config"],
        )
        if not isinstance(result, dict):
            raise TypeError(f"agent/request returned an invalid config: {result!r}")
        self._config = dict(result)
        return self._config

    def _log_header(self, header: dict[str, Any]) -> None:
        if self._first_request:
            reason = "resume" if self.session.resumed else "initial"
            self._first_request = False
        elif header != self._last_header:
            reason = "change"
        else:
            return
        self.session.append("request/header", {"header": header, "reason": reason})
        self._last_header = header

    def context_window(self, provider_name: str, model: str) -> int | None:
        override = self.options.compaction.context_window
        if override:
            return override
        provider = self.providers.get(provider_name)
        if provider is None:
            return None
        try:
            return provider.model_info(model).context_window
        except Exception:
            return None

    def _log_route(self, provider: ModelProvider, provider_name: str, model: str) -> None:
        route: dict[str, Any] = {"provider": provider_name, "model": model}
        window = self.context_window(provider_name, model)
        if window is not None:
            route["contextWindow"] = window
        if route != self._last_route:
            self.session.append("request/context", route)
            self._last_route = route

    async def _stream(self, token: CancelToken, provider: ModelProvider, request: ModelRequest, turn: int,
                      step: int) -> tuple[Assembler, list[int]]:
        """Stream one attempt: every chunk is logged and assembled. A cancel
        stops the stream at once (the consuming task is cancelled)."""
        asm = Assembler()
        seqs: list[int] = []
        append = self.session.append

        def log_chunk(chunk: dict[str, Any]) -> None:
            seqs.append(append("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk}).seq)
            asm.feed(chunk)

        async def consume() -> None:
            if self.hooks.has("llm/stream"):
                # Middleware may wrap or short-circuit the stream. A failure it
                # throws at dispatch stays thrown: a turn error, never offered
                # to request recovery (R8).
                agen = await self.hooks.run_waterfall(
                    "llm/stream",
                    {"request": request, "provider": request.provider, "turn": turn, "step": step, "signal": token},
                    lambda p: provider.stream(p["request"]),
                )
            else:
                agen = provider.stream(request)
            try:
                async for chunk in agen:
                    if token.aborted:
                        return
                    log_chunk(chunk)
                    if token.aborted or asm.finish is not None:
                        return
            except LlmError as e:
                failure = dict(e.failure)
                kind = "aborted" if token.aborted or failure.get("code") == "ABORTED" else "error"
                log_chunk({"type": "finish", "kind": kind, "failure": failure})
            except asyncio.CancelledError:
                raise
            except Exception as e:
                kind = "aborted" if token.aborted else "error"
                log_chunk({"type": "finish", "kind": kind, "failure": {"code": "UNKNOWN", "message": _error_chain(e)}})
            finally:
                aclose = getattr(agen, "aclose", None)
                if aclose is not None:
                    try:
                        await aclose()
                    except BaseException:
                        pass
            if asm.finish is None and not token.aborted:
                log_chunk({"type": "finish", "kind": "error",
                           "failure": {"code": "EMPTY_RESPONSE", "message": "the stream ended without a finish"}})

        await self._run_cancellable(token, consume())
        return asm, seqs

    async def _hook(self, token: CancelToken, name: str, payload: dict[str, Any],
                    terminal: Callable[[Any], Any] | None) -> Any:
        """Run a waterfall (or, with no terminal, a serial point). Listeners
        get `cancel_grace_s` after a cancel to settle on their own; one that
        ignores the cancel is then cancelled and abandoned (Aborted)."""
        if terminal is not None:
            coro = self.hooks.run_waterfall(name, payload, terminal)
        else:
            coro = self.hooks.run_serial(name, payload)
        if not self.hooks.has(name):
            return await coro  # the fast path: only the terminal runs
        loop = asyncio.get_running_loop()
        task = loop.create_task(coro)
        done = loop.create_future()

        def finish(_: Any = None) -> None:
            if not done.done():
                done.set_result(None)

        def abandon() -> None:
            task.cancel()
            finish()

        def on_abort(_: Any) -> None:
            loop.call_later(self.options.cancel_grace_s, abandon)

        task.add_done_callback(finish)
        off = token.on_abort(on_abort)
        if token.aborted:
            on_abort(token.reason)
        try:
            await done
        finally:
            off()
        if not task.done() or task.cancelled():
            raise Aborted(token.reason)
        return task.result()

    async def _run_cancellable(self, token: CancelToken, coro: Any) -> None:
        """Run `coro` as a task that a cancel stops at once. A task that
        ignores its cancellation is abandoned after `cancel_grace_s`."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(coro)
        if token.aborted:
            task.cancel()
        done = loop.create_future()

        def finish(_: Any = None) -> None:
            if not done.done():
                done.set_result(None)

        def on_abort(_: Any) -> None:
            task.cancel()
            loop.call_later(self.options.cancel_grace_s, finish)

        task.add_done_callback(finish)
        off = token.on_abort(on_abort)
        try:
            await done
        finally:
            off()
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]

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
        self._emit("agent/disposed", {"agentId": self.id, "sessionId": self.session_id})

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
        from agent_lsp.agent.compaction import Compaction, CompactionError

        compaction = self.compaction or Compaction(self)
        try:
            return self.run_maintenance(compaction.compact_manual)
        except AgentBusyError as e:
            raise CompactionError("busy", str(e)) from None
