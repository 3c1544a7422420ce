"""One attempt at a model's reply: the stream (through `llm/stream` middleware
when there is any), every chunk logged as `assistant/chunk` and assembled, a
failure recorded as the stream's `finish` chunk."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.agent.cancellable import run_cancellable
from agent_lsp.agent.history import Assembler
from agent_lsp.llm.types import LlmError, ModelProvider, ModelRequest

if TYPE_CHECKING:
    from agent_lsp.agent.hooks import HookBus
    from agent_lsp.agent.signal import CancelToken
    from agent_lsp.store.session import Event


def error_chain(e: BaseException) -> str:
    """An exception and its causes, as a failure's message: `Type: text <- Cause: text`."""
    parts = []
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        parts.append(f"{type(cur).__name__}: {cur}" if str(cur) else type(cur).__name__)
        cur = cur.__cause__ or cur.__context__
    return " <- ".join(parts)


async def stream_reply(token: CancelToken, provider: ModelProvider, request: ModelRequest, turn: int, step: int, *,
                       append: Callable[[str, dict[str, Any]], Event], hooks: HookBus, started: Callable[[], None],
                       grace_s: float) -> tuple[Assembler, list[int]]:
    """Stream one attempt: every chunk is logged (`append`) and assembled, and
    `started()` called at each. A cancel stops the stream at once (the consuming
    task is cancelled)."""
    asm = Assembler()
    seqs: list[int] = []

    def log_chunk(chunk: dict[str, Any]) -> None:
        seqs.append(append("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk}).seq)
        asm.feed(chunk)

    async def consume() -> None:
        if hooks.has("llm/stream"):
            # Middleware may wrap or short-circuit the stream. A failure it
            # throws at dispatch stays thrown: a turn error, never offered
            # to request recovery (R8).
            agen = await hooks.run_waterfall(
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
                started()
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
            log_chunk({"type": "finish", "kind": kind, "failure": {"code": "UNKNOWN", "message": error_chain(e)}})
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

    await run_cancellable(token, consume(), grace_s)
    return asm, seqs
