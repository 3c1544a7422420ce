"""Deltas that arrive in one network read leave the provider as one chunk
(the loop, the session log and the relay then handle one event per read, not
one per token), against a real local HTTP server."""

from __future__ import annotations

import asyncio

import pytest

from agent_lsp.llm import precedence, transport
from agent_lsp.llm.anthropic import AnthropicProvider
from agent_lsp.llm.openai import OpenAIProvider
from agent_lsp.llm.transport import Timeouts
from agent_lsp.llm.types import LlmError, ModelRequest
from llm_fake_server import Reply, recording

TIMEOUTS = Timeouts(connect=2, first_byte=2, idle=2)


def request(provider: str) -> ModelRequest:
    return ModelRequest(provider=provider, model="m", system="",
                        messages=({"role": "user", "content": [{"type": "text", "text": "hi"}]},))


async def collect(provider, name: str) -> tuple[list[dict], LlmError | None]:
    chunks: list[dict] = []
    try:
        async for chunk in provider.stream(request(name)):
            chunks.append(chunk)
    except LlmError as error:
        return chunks, error
    finally:
        await provider.aclose()
    return chunks, None


def text_of(chunks: list[dict], kind: str = "text-delta") -> str:
    return "".join(c["text"] for c in chunks if c["type"] == kind)


@pytest.mark.parametrize("name, make, file", [
    ("openai", lambda url: OpenAIProvider(base_url=url + "/v1", api_key="k", timeouts=TIMEOUTS), "openai_text.sse"),
    ("anthropic", lambda url: AnthropicProvider(base_url=url, api_key="k", timeouts=TIMEOUTS), "anthropic_text.sse"),
])
async def test_one_read_of_deltas_is_one_chunk_with_the_same_text(server, name, make, file):
    data = recording(file)
    server.queue(Reply.sse(data, awkward=False), Reply.sse(data))  # one read; then tiny reads
    whole, error = await collect(make(server.url), name)
    assert error is None
    awkward, error = await collect(make(server.url), name)
    assert error is None
    assert [c["type"] for c in whole].count("text-delta") == 1
    assert [c["type"] for c in awkward].count("text-delta") > 1
    assert text_of(whole) == text_of(awkward) != ""
    assert [c for c in whole if c["type"] != "text-delta"] == [c for c in awkward if c["type"] != "text-delta"]


async def test_tool_arguments_of_one_read_are_joined_per_call(server):
    server.queue(Reply.sse(recording("anthropic_thinking_tool.sse"), awkward=False))
    chunks, error = await collect(AnthropicProvider(base_url=server.url, api_key="k", timeouts=TIMEOUTS), "anthropic")
    assert error is None
    deltas = [c for c in chunks if c["type"] == "tool-call-delta"]
    starts = [c["id"] for c in chunks if c["type"] == "tool-call-start"]
    assert [d["id"] for d in deltas] == starts  # one delta per call: its whole arguments
    assert [c for c in chunks if c["type"] == "reasoning-delta"][0]["text"] == text_of(chunks, "reasoning-delta")


async def test_text_before_an_error_event_of_the_same_read_is_kept(server):
    server.queue(Reply.sse(recording("openai_error_event.sse"), awkward=False))
    chunks, error = await collect(OpenAIProvider(base_url=server.url + "/v1", api_key="k", timeouts=TIMEOUTS), "openai")
    assert error is not None and error.code == "SERVER"
    assert text_of(chunks) == "Let me"


def loop_turns() -> tuple[list[int], asyncio.Task]:
    """A task that counts the loop turns it gets (in the list's one item), and the task."""
    turns = [0]

    async def other_task() -> None:
        while True:
            await asyncio.sleep(0)
            turns[0] += 1

    return turns, asyncio.create_task(other_task())


def openai_deltas(n: int) -> bytes:
    """An OpenAI Chat Completions stream of `n` text deltas " <i>"."""
    def event(delta: str, finish: str = "null") -> str:
        return ('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":%s,'
                '"finish_reason":%s}]}\n\n' % (delta, finish))
    parts = [event('{"role":"assistant","content":""}')]
    parts += [event('{"content":" %d"}' % i) for i in range(n)]
    parts.append(event("{}", '"stop"'))
    return ("".join(parts) + "data: [DONE]\n\n").encode()


async def test_a_long_read_lets_other_tasks_run_and_loses_nothing(server, monkeypatch):
    """Thousands of deltas in one write: the stream hands them over in slices and
    the event loop runs other tasks (other sessions, requests) between two."""
    monkeypatch.setattr(transport, "SLICE_S", 0.0)  # a slice at every look at the clock
    n = 5000
    server.queue(Reply.sse(openai_deltas(n), awkward=False))
    provider = OpenAIProvider(base_url=server.url + "/v1", api_key="k", timeouts=TIMEOUTS)
    turns, ticker = loop_turns()
    seen: list[int] = []  # the other task's turns at each text chunk
    chunks: list[dict] = []
    try:
        async for chunk in provider.stream(request("openai")):
            chunks.append(chunk)
            if chunk["type"] == "text-delta":
                seen.append(turns[0])
    finally:
        ticker.cancel()
        await provider.aclose()
    assert text_of(chunks) == "".join(f" {i}" for i in range(n))
    texts = [c["text"] for c in chunks if c["type"] == "text-delta"]
    assert max(text.count(" ") for text in texts) <= 16  # a read of hundreds of deltas was cut up
    assert all(later > earlier for earlier, later in zip(seen, seen[1:]))  # the other task ran between any two


async def test_a_stream_gives_way_longer_while_a_starting_or_ending_turn_holds_precedence(server, monkeypatch):
    """Once it has delivered its first chunk, a stream lets the loop run for a while
    between two slices when some other turn needs loop turns now."""
    monkeypatch.setattr(transport, "SLICE_S", 0.0)
    server.queue(Reply.sse(openai_deltas(2000), awkward=False))
    provider = OpenAIProvider(base_url=server.url + "/v1", api_key="k", timeouts=TIMEOUTS)
    turns, ticker = loop_turns()
    release = precedence.hold()
    seen: list[int] = []
    try:
        async for chunk in provider.stream(request("openai")):
            if chunk["type"] == "text-delta":
                seen.append(turns[0])
            if len(seen) == 20:
                release()  # the other turn got its chunk: the stream goes on at full pace
    finally:
        release()
        ticker.cancel()
        await provider.aclose()
    held = [later - earlier for earlier, later in zip(seen[1:20], seen[2:20])]
    free = [later - earlier for earlier, later in zip(seen[21:], seen[22:])]
    assert not precedence.held()
    # ~2 ms of other tasks' loop turns between two slices, against one or two
    assert sorted(held)[len(held) // 2] > max(free)


async def test_precedence_ends_by_itself_so_a_slow_model_does_not_slow_the_other_streams(monkeypatch):
    monkeypatch.setattr(precedence, "MAX_HOLD_S", 0.05)
    release = precedence.hold()  # a turn whose model has not answered yet
    assert precedence.held()
    await asyncio.sleep(0.1)
    assert not precedence.held()
    release()  # its first chunk, later: nothing more to give back
    assert not precedence.held()
