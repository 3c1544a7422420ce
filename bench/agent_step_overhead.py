"""Loop overhead per step with a zero-latency scripted model (target: < 1 ms).

Runs N single-step turns and N/2 two-step turns (one no-op tool call), and
subtracts the time spent inside the scripted model itself (timed around each
chunk it yields). Times are process CPU time, so a loaded machine does not
inflate them.
Run: .venv/bin/python bench/agent_step_overhead.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.agent.ports import ToolOutput
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.llm.types import ModelRequest
from agent_lsp.store import SessionStore

N = 1000


class NoArgs(BaseModel):
    pass


class Noop:
    name = "noop"
    description = "does nothing"
    input_model = NoArgs

    def is_parallel(self, args: BaseModel) -> bool:
        return True

    async def run(self, args: BaseModel, ctx: object) -> ToolOutput:
        return ToolOutput(content="ok")


class TimedProvider:
    """The scripted model, timing the time spent inside it (subtracted from the total)."""

    def __init__(self, replies: list[dict]):
        self.inner = ScriptedProvider(replies)
        self.name = "scripted"
        self.spent = 0.0

    def model_info(self, model: str):
        return self.inner.model_info(model)

    async def stream(self, request: ModelRequest):
        agen = self.inner.stream(request).__aiter__()
        while True:
            t0 = time.process_time()
            try:
                chunk = await agen.__anext__()
            except StopAsyncIteration:
                self.spent += time.process_time() - t0
                return
            self.spent += time.process_time() - t0
            yield chunk


async def run(replies: list[dict], turns: int, directory: Path, compaction: bool = True) -> tuple[float, float, int]:
    store = SessionStore(directory)
    session = store.create()
    options = AgentOptions(provider="scripted", model="m")
    options.compaction.enabled = compaction
    provider = TimedProvider(replies)
    agent = Agent(session, providers={"scripted": provider}, tools=ToolRegistry([Noop()]), options=options)
    t0 = time.process_time()
    for i in range(turns):
        agent.followup(f"message {i}")
        await agent.when_idle()
    elapsed = time.process_time() - t0
    steps = sum(1 for e in session.events if e.type == "step/start")
    return elapsed, provider.spent, steps


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tool_turn = ({"tools": [{"name": "noop", "arguments": {}}]}, {"text": "ok"})
        for label, replies, turns, compaction in (
            ("text-only steps", [{"text": "hello"}] * N, N, True),
            ("tool steps (1 no-op call + answer)", [r for _ in range(N // 2) for r in tool_turn], N // 2, True),
            ("text-only steps, compaction plugin off", [{"text": "hello"}] * N, N, False),
        ):
            total, model, steps = await run(replies, turns, Path(tmp) / label.replace(" ", "_"), compaction)
            per_step_ms = (total - model) / steps * 1000
            print(f"{label:40s} {steps:5d} steps  total {total * 1000:8.1f} ms  model {model * 1000:7.1f} ms  "
                  f"overhead {per_step_ms:.3f} ms/step")
    print("(each step logs ~10 events; the session grows to ~10,000 events over the run)")


if __name__ == "__main__":
    asyncio.run(main())
