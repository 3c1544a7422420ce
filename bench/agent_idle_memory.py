"""Memory per idle session (target: < 1 MB): agents that ran one short turn, then idle.
Run: .venv/bin/python bench/agent_idle_memory.py
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import tracemalloc
from pathlib import Path

from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore

N = 300


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp))
        provider = ScriptedProvider()  # echoes; shared, as a real provider would be
        agents = []
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(N):
            agent = Agent(store.create(), providers={"scripted": provider}, tools=ToolRegistry(),
                          options=AgentOptions(provider="scripted", model="m", system_prompt="You are helpful."))
            agent.followup(f"hello number {i}")
            await agent.when_idle()
            agents.append(agent)
        provider.requests.clear()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        per = (after - before) / N
        events = sum(len(a.session.events) for a in agents) / N
        print(f"{N} idle agents after one turn each ({events:.0f} events each): {per / 1024:.1f} KiB per session")


if __name__ == "__main__":
    asyncio.run(main())
