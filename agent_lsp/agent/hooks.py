"""The hook bus (R8): named extension points that plugins (retry,
compaction, permissions) use exactly as the built-ins do.

- waterfall: `fn(payload, next)`; listeners chain through `await next(p?)`
  in registration order; the first listener's return value is authoritative.
- serial: `fn(payload)`; each listener is awaited in turn; no return value.

Listeners may be sync or async functions. `hooks.register(name, fn)` (or
its aliases `hooks.waterfall` / `hooks.serial`) returns an unregister
callable; `first=True` makes the listener outermost.

Points, payloads (dicts) and results:

    system-prompt/assemble  {turn, signal, system: str, tools: [ToolSpec]}
                            -> {"system": str, "tools": [ToolSpec], "workspace"?: str}
                               (workspace: the folder's part, sent as the first message)
    agent/pre-step          {messages: [user message], turn, step, signal}
                            -> {"kind": "enter", "messages": [...]} | {"kind": "reject", "reason"?}
    agent/request           {config: {provider, model, maxTokens, temperature, options?}, turn, step, signal}
                            -> the config to use (a replacement switches the route; it stays routed)
    llm/stream              {request: ModelRequest, provider: str, turn, step, signal}
                            -> an async iterator of chunks (wrap `await next()` or replace it);
                               a throw here is a turn error, not offered to agent/request-error
    agent/request-error     {turn, step, provider, model, failure: LlmFailure, attempt, signal}
                            -> {"kind": "retry"} to re-send in the same step; None (the default) is terminal
    tools/pre-execute       {callId, name, arguments: BaseModel, tool, turn, step, signal}
                            -> {"kind": "allow"} | {"kind": "deny", "reason"?}  (anything else denies)
    tools/execute           {callId, name, arguments, context: ToolContext} -> ToolOutput (wrap the body)
    tools/post-execute      {callId, name, arguments, output: ToolOutput, turn, step, signal}
                            -> ToolOutput | {"kind": "accept", "output"?, "additionalContexts"?}
                               | {"kind": "block", "feedback"}
    agent/turn-stopping     {turn, signal} (serial; steer()/inject() to continue the turn)
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable

WATERFALL_POINTS = frozenset(
    {
        "system-prompt/assemble",
        "agent/pre-step",
        "agent/request",
        "llm/stream",
        "agent/request-error",
        "tools/pre-execute",
        "tools/execute",
        "tools/post-execute",
    }
)
SERIAL_POINTS = frozenset({"agent/turn-stopping"})

Next = Callable[..., Awaitable[Any]]


async def _resolve(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


class HookBus:
    def __init__(self) -> None:
        self._listeners: dict[str, list[Callable[..., Any]]] = {}

    def register(self, name: str, fn: Callable[..., Any], *, first: bool = False) -> Callable[[], None]:
        """Add a listener; `first=True` puts it ahead of the others (outermost)."""
        listeners = self._listeners.setdefault(name, [])
        if first:
            listeners.insert(0, fn)
        else:
            listeners.append(fn)

        def unregister() -> None:
            if fn in listeners:
                listeners.remove(fn)

        return unregister

    # Readable aliases: hooks.waterfall("agent/pre-step", fn), hooks.serial("agent/turn-stopping", fn)
    waterfall = register
    serial = register

    def has(self, name: str) -> bool:
        return bool(self._listeners.get(name))

    async def run_waterfall(self, name: str, payload: Any, terminal: Callable[[Any], Any]) -> Any:
        listeners = tuple(self._listeners.get(name, ()))
        if not listeners:
            return await _resolve(terminal(payload))

        async def call(i: int, p: Any) -> Any:
            if i == len(listeners):
                return await _resolve(terminal(p))

            async def next_(p2: Any = None) -> Any:
                return await call(i + 1, p if p2 is None else p2)

            return await _resolve(listeners[i](p, next_))

        return await call(0, payload)

    async def run_serial(self, name: str, payload: Any) -> None:
        for fn in tuple(self._listeners.get(name, ())):
            await _resolve(fn(payload))
