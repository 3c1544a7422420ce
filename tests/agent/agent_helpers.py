"""Test helpers: a tool built from a coroutine, and an agent on a temp store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

from pydantic import BaseModel

from agent_lsp.agent.events import only
from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.agent.ports import ToolOutput
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore


class AnyArgs(BaseModel):
    model_config = {"extra": "allow"}


class FnTool:
    """A tool whose body is `fn(args, ctx)`; `parallel` sets is_parallel."""

    def __init__(self, name: str, fn: Callable[[Any, Any], Awaitable[Any]] | None = None, *, parallel: Any = False,
                 input_model: type[BaseModel] = AnyArgs, description: str = "a test tool"):
        self.name = name
        self.description = description
        self.input_model = input_model
        self.parallel = parallel
        self.fn = fn
        self.runs: list[str] = []

    def is_parallel(self, args: BaseModel) -> bool:
        if callable(self.parallel):
            return self.parallel(args)
        return self.parallel

    async def run(self, args: BaseModel, ctx: Any) -> ToolOutput:
        self.runs.append(ctx.call_id)
        if self.fn is None:
            return ToolOutput(content=f"{self.name} ok")
        out = await self.fn(args, ctx)
        if isinstance(out, ToolOutput):
            return out
        return ToolOutput(content=str(out) if out is not None else f"{self.name} ok")


class Gate:
    """A tool body that waits until released (per call id)."""

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}
        self.log: list[str] = []

    def _ev(self, call_id: str) -> asyncio.Event:
        return self.events.setdefault(call_id, asyncio.Event())

    def release(self, call_id: str) -> None:
        self._ev(call_id).set()

    async def body(self, args: Any, ctx: Any) -> str:
        self.log.append(f"{ctx.call_id}-start")
        await self._ev(ctx.call_id).wait()
        self.log.append(f"{ctx.call_id}-end")
        return f"{ctx.call_id} done"


def make_agent(tmp_path: Path, script: list[Any] | None = None, tools: list[Any] | None = None,
               provider: ScriptedProvider | None = None, session=None, **options: Any) -> Agent:
    store = SessionStore(tmp_path / "sessions")
    session = session or store.create()
    provider = provider or ScriptedProvider(script)
    opts = AgentOptions(provider="scripted", model="m1", **options)
    agent = Agent(session, providers={"scripted": provider}, tools=ToolRegistry(tools or []), options=opts)
    agent.provider = provider  # type: ignore[attr-defined]
    agent.store = store  # type: ignore[attr-defined]
    return agent


def types_of(agent: Agent) -> list[str]:
    return [e.type for e in agent.session.events]


def events_of(agent: Agent, type_: str) -> list[Any]:
    return [e for e in agent.session.events if e.type == type_]


def statuses(agent: Agent) -> list[str]:
    out: list[str] = []
    agent.subscribe(only("agent/status", lambda p: out.append(p["status"])))
    return out


def turn_ends(agent: Agent) -> list[str]:
    return [e.data["reason"]["kind"] for e in events_of(agent, "turn/end")]


def request_texts(request: Any) -> list[str]:
    """The text of every message of a model request, in order."""
    out = []
    for m in request.messages:
        out.append("".join(b.get("text", "") for b in m.get("content", ()) if b.get("type") == "text"))
    return out


async def settle(agent: Agent, timeout: float = 5.0) -> None:
    await asyncio.wait_for(agent.when_idle(), timeout)


async def until(cond: Callable[[], Any], timeout: float = 5.0) -> None:
    """Wait (yielding to the loop) until cond() is true; fail after `timeout` seconds."""

    async def loop() -> None:
        while not cond():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(loop(), timeout)
