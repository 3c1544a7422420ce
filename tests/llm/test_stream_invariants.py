"""Whatever the network cuts, every recorded stream normalises to the same
well-formed chunk sequence: text and reasoning blocks strictly sequential,
tool-call deltas only between their start and end, one finish, last."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_lsp.llm.anthropic import AnthropicStream
from agent_lsp.llm.openai import OpenAIStream
from agent_lsp.llm.sse import SseDecoder
from agent_lsp.llm.transport import StreamContext
from llm_fake_server import recording

SUCCESSFUL = [
    "openai_text.sse",
    "openai_tools_parallel.sse",
    "openai_reasoning.sse",
    "ollama_whole_calls.sse",
    "llamacpp_repeated_name.sse",
    "anthropic_text.sse",
    "anthropic_thinking_tool.sse",
]


def normalise(name: str, parts: list[bytes]) -> list[dict]:
    ctx = StreamContext("test", "m")
    anthropic = name.startswith("anthropic")
    state = AnthropicStream(ctx) if anthropic else OpenAIStream(ctx)
    decoder = SseDecoder()
    chunks: list[dict] = []
    for part in parts:
        for event in decoder.feed(part):
            chunks.extend(state.feed(event.event, event.data) if anthropic else state.feed(event.data))
    for event in decoder.close():
        chunks.extend(state.feed(event.event, event.data) if anthropic else state.feed(event.data))
    return chunks + state.end()


def assert_well_formed(chunks: list[dict]) -> None:
    open_block = None
    calls: dict[str, str] = {}  # id -> "open" | "closed"
    for i, chunk in enumerate(chunks):
        kind = chunk["type"]
        if kind in ("text-start", "reasoning-start"):
            assert open_block is None, f"{kind} while {open_block} is open"
            open_block = kind.split("-")[0]
        elif kind in ("text-delta", "reasoning-delta"):
            assert open_block == kind.split("-")[0] and chunk["text"]
        elif kind in ("text-end", "reasoning-end"):
            assert open_block == kind.split("-")[0]
            open_block = None
        elif kind == "tool-call-start":
            assert chunk["id"] not in calls and chunk["name"]
            calls[chunk["id"]] = "open"
        elif kind == "tool-call-delta":
            assert calls.get(chunk["id"]) == "open" and chunk["delta"]
        elif kind == "tool-call-end":
            assert calls.get(chunk["id"]) == "open"
            calls[chunk["id"]] = "closed"
        elif kind == "finish":
            assert i == len(chunks) - 1 and open_block is None
            assert all(state == "closed" for state in calls.values())
        else:
            assert kind == "usage"
    assert chunks[-1]["type"] == "finish"
    # Every call's arguments are complete JSON at the end.
    args: dict[str, str] = {}
    for chunk in chunks:
        if chunk["type"] == "tool-call-delta":
            args[chunk["id"]] = args.get(chunk["id"], "") + chunk["delta"]
    for text in args.values():
        json.loads(text)


@pytest.mark.parametrize("name", SUCCESSFUL)
def test_recordings_are_well_formed(name):
    assert_well_formed(normalise(name, [recording(name)]))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_any_cuts_give_the_same_chunks(data):
    name = data.draw(st.sampled_from(SUCCESSFUL))
    raw = recording(name)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(raw) - 1), max_size=60)))
    parts = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
    assert normalise(name, parts) == normalise(name, [raw])


def test_text_before_a_tool_call_is_closed_first():
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me look."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    state = OpenAIStream(StreamContext("t", "m"))
    chunks = [c for e in events for c in state.feed(json.dumps(e))] + state.feed("[DONE]") + state.end()
    assert [c["type"] for c in chunks] == [
        "text-start", "text-delta", "text-end", "tool-call-start", "tool-call-delta", "tool-call-end", "finish",
    ]
    assert_well_formed(chunks)


def test_arguments_before_the_name_are_held_back():
    events = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\""}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": ": 1}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    state = OpenAIStream(StreamContext("t", "m"))
    chunks = [c for e in events for c in state.feed(json.dumps(e))] + state.end()
    assert_well_formed(chunks)
    start = chunks[0]
    assert start["type"] == "tool-call-start" and start["name"] == "f" and start["id"].startswith("call_")
    assert "".join(c["delta"] for c in chunks if c["type"] == "tool-call-delta") == '{"a": 1}'
