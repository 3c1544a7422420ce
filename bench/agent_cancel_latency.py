"""Cancel latency: from cancel() to turn/end and status idle, for a hanging
stream, a cooperative tool, and a tool that ignores cancellation (grace 2 s
by default; here 0.2 s). Targets: < 100 ms when cooperative; ~grace otherwise.
Run: .venv/bin/python bench/agent_cancel_latency.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from agent_lsp.agent.events import only
from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.agent.ports import ToolOutput
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore


class NoArgs(BaseModel):
    pass


class Waiter:
    description = "waits"
    input_model = NoArgs

    def __init__(self, name: str, cooperative: bool):
        self.name = name
        self.cooperative = cooperative

    def is_parallel(self, args: BaseModel) -> bool:
        return False

    async def run(self, args: BaseModel, ctx) -> ToolOutput:
        if self.cooperative:
            await ctx.signal.wait()
            return ToolOutput(content="stopped")
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue
        return ToolOutput(content="late")


async def measure(label: str, script: list[dict], directory: Path) -> None:
    session = SessionStore(directory).create()
    agent = Agent(session, providers={"scripted": ScriptedProvider(script)},
                  tools=ToolRegistry([Waiter("coop", True), Waiter("stubborn", False)]),
                  options=AgentOptions(provider="scripted", model="m", cancel_grace_s=0.2))
    idle = asyncio.Event()
    agent.subscribe(only("agent/status", lambda p: idle.set() if p["status"] == "idle" else None))
    agent.followup("go")
    await asyncio.sleep(0.05)
    t0 = time.perf_counter()
    agent.cancel()
    await idle.wait()
    ms = (time.perf_counter() - t0) * 1000
    print(f"{label:40s} cancel -> idle {ms:7.1f} ms  ({session.events[-1].type} {session.events[-1].data})")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await measure("hanging stream", [{"hang": "partial"}], Path(tmp) / "a")
        await measure("cooperative tool", [{"tools": [{"name": "coop", "arguments": {}}]}], Path(tmp) / "b")
        await measure("tool ignoring cancel (grace 0.2 s)", [{"tools": [{"name": "stubborn", "arguments": {}}]}],
                      Path(tmp) / "c")


if __name__ == "__main__":
    asyncio.run(main())
