"""Long sessions against a model server with a small context window (4k, 8k),
over real HTTP: the agent compacts before a request would be rejected,
every compaction is shown (a compaction/start ... compaction/end bracket
the clients render), and a window too small for the fixed prompt is refused
with the reason and what to do, without a request."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.agent.ports import ToolOutput
from agent_lsp.llm.openai import OpenAIProvider
from agent_lsp.llm.transport import Timeouts
from agent_lsp.store import SessionStore
from llm_fake_server import Reply
from llm_window_server import WindowedModel

UNIT = ("You are a careful coding agent working in the user's repository. Read before you edit, keep changes "
          "small, run the tests you touch, and report what you did in a few plain sentences. ")
LOG = "ERROR 2026-12-07 checksum mismatch in chunk 12: expected 95036, got 95037 (retrying)\n" * 3
SYSTEM = UNIT * 30  # about 1,400 tokens by characters / 4, some 1,650 by the server's count


class ChunkArgs(BaseModel):
    chunk: int


class ReadChunk:
    """A tool with large results: a third of the window or so, in code."""

    def __init__(self, lines: int):
        self.lines = lines

    name = "read_chunk"
    description = "Read one chunk of the big file."
    input_model = ChunkArgs

    def is_parallel(self, args: BaseModel) -> bool:
        return True

    async def run(self, args: ChunkArgs, ctx) -> ToolOutput:
        lines = [f"def f_{args.chunk}_{i}(x):  # checksum {args.chunk * 7919 + i}\n    return x * {i} + {args.chunk}\n"
                 for i in range(self.lines)]
        return ToolOutput(content="".join(lines))


def inside_brackets(agent: Agent) -> bool:
    """Every change of what the model sees (a pruned result, a checkpoint) lies
    inside a compaction/start ... compaction/end that ended without error."""
    open_id = None
    for e in agent.session.events:
        if e.type == "compaction/start":
            open_id = e.data["compactionId"]
        elif e.type == "compaction/end":
            assert e.data["compactionId"] == open_id and not e.data.get("error"), e.data
            open_id = None
        elif isinstance(e.data.get("surfaceOp"), dict) and e.type != "session/rewind":
            if open_id is None:
                return False
    return open_id is None


@pytest.mark.parametrize("n_ctx", [4096, 8192])
async def test_a_30_step_session_never_overflows_and_shows_each_compaction(server, tmp_path, n_ctx):
    """The fixed prompt takes over half the window (as the product's does at 4k):
    what is left must hold the conversation, the newest tool result and the reply."""
    model = WindowedModel(server, n_ctx, tool="read_chunk", steps_per_turn=10)
    provider = OpenAIProvider(base_url=server.url + "/v1", timeouts=Timeouts(5, 5, 5))
    agent = Agent(SessionStore(tmp_path).create(), providers={"openai": provider},
                  tools=ToolRegistry([ReadChunk(n_ctx // 40)]),
                  options=AgentOptions(provider="openai", model="local-coder", system_prompt=UNIT * (n_ctx // 100)))
    shown = []
    agent.subscribe(lambda e: shown.append(e.type) if getattr(e, "type", "").startswith("compaction/") else None)
    for batch in range(3):
        pasted = f"\n\nThe log I got:\n{LOG * (n_ctx // 1000)}" if batch == 1 else ""
        agent.followup(f"start batch {batch}: read the next ten chunks and note their checksums{pasted}")
        await asyncio.wait_for(agent.when_idle(), 30)
    ends = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
    assert [r["kind"] for r in ends] == ["completed"] * 3, ends
    assert len([e for e in agent.session.events if e.type == "tool/call"]) == 30
    assert model.rejected == []  # never a 400: compacted before
    assert max(model.prompts) < n_ctx
    starts = [e for e in agent.session.events if e.type == "compaction/start"]
    assert len(starts) >= (3 if n_ctx == 4096 else 2)
    assert inside_brackets(agent)
    assert shown.count("compaction/start") == shown.count("compaction/end") == len(starts)
    await agent.dispose()
    await provider.aclose()


async def test_a_window_too_small_for_the_fixed_prompt_is_refused_with_the_reason(server, tmp_path):
    model = WindowedModel(server, 1536, tool="read_chunk", steps_per_turn=1)
    provider = OpenAIProvider(base_url=server.url + "/v1", timeouts=Timeouts(5, 5, 5), context_window=1536)
    agent = Agent(SessionStore(tmp_path).create(), providers={"openai": provider},
                  tools=ToolRegistry([ReadChunk(10)]),
                  options=AgentOptions(provider="openai", model="local-coder", system_prompt=SYSTEM))
    agent.followup("start batch 0")
    await asyncio.wait_for(agent.when_idle(), 10)
    reason = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"][-1]
    assert reason["kind"] == "error" and reason["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    message = reason["error"]["message"]
    assert "context window (1536 tokens) is too small" in message
    assert "larger context" in message and "fewer tools" in message
    assert server.requests == [] and model.rejected == []
    # the message is kept in the history, as after a failure the server reports
    assert [m["content"][0]["text"] for m in agent.derive_messages()] == ["start batch 0"]
    await agent.dispose()
    await provider.aclose()


async def test_a_slow_server_s_window_is_waited_for_rather_than_compacting_by_a_guess(server, tmp_path):
    """While the server's answer is still coming, a guessed window stands in; a
    first request the guess would compact waits for the real window instead."""
    model = WindowedModel(server, 32768, tool="read_chunk", steps_per_turn=0)
    # 0.6 s: past the first step's short wait, within the longer one a compaction waits
    server.routes["GET /props"] = Reply(parts=[b'{"default_generation_settings": ', b'{"n_ctx": 32768}}'],
                                        headers={"content-type": "application/json"}, delay_s=0.3)
    provider = OpenAIProvider(base_url=server.url + "/v1", timeouts=Timeouts(5, 5, 5))
    agent = Agent(SessionStore(tmp_path).create(), providers={"openai": provider},
                  tools=ToolRegistry([ReadChunk(10)]),
                  options=AgentOptions(provider="openai", model="slow-probe-coder", system_prompt=SYSTEM))
    agent.followup("start batch 0: look at this log\n" + LOG * 120)  # some 9,000 tokens
    await asyncio.wait_for(agent.when_idle(), 30)
    assert [e.data["reason"]["kind"] for e in agent.session.events if e.type == "turn/end"] == ["completed"]
    assert [e for e in agent.session.events if e.type.startswith("compaction/")] == []
    routes = [e.data for e in agent.session.events if e.type == "request/context"]
    assert routes[0]["contextWindow"] == 32768
    assert model.rejected == [] and len(model.prompts) == 1
    await agent.dispose()
    await provider.aclose()
