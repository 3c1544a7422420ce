"""Running what a cancel must be able to stop: a hook point's listeners (given
a grace after the cancel to settle on their own) and the consumer of a model
stream (cancelled at once); one that ignores the cancel is abandoned."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.agent.signal import Aborted, CancelToken

if TYPE_CHECKING:
    from agent_lsp.agent.hooks import HookBus


async def run_hook(hooks: HookBus, grace_s: float, token: CancelToken, name: str, payload: dict[str, Any],
                   terminal: Callable[[Any], Any] | None) -> Any:
    """Run a waterfall (or, with no terminal, a serial point). Listeners
    get `grace_s` after a cancel to settle on their own; one that
    ignores the cancel is then cancelled and abandoned (Aborted)."""
    if terminal is not None:
        coro = hooks.run_waterfall(name, payload, terminal)
    else:
        coro = hooks.run_serial(name, payload)
    if not hooks.has(name):
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
        loop.call_later(grace_s, abandon)

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


async def run_cancellable(token: CancelToken, coro: Any, grace_s: float) -> None:
    """Run `coro` as a task that a cancel stops at once. A task that
    ignores its cancellation is abandoned after `grace_s`."""
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
        loop.call_later(grace_s, finish)

    task.add_done_callback(finish)
    off = token.on_abort(on_abort)
    try:
        await done
    finally:
        off()
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]
