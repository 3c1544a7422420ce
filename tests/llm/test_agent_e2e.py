"""The real providers under the real agent loop, over real HTTP: the loop's
retry recovers from transient faults, stops on permanent ones, and a tool
round trip sends the model's thinking (signature intact) back to Anthropic."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from agent_lsp.agent import Agent, AgentOptions, RetryOptions, ToolRegistry
from agent_lsp.agent.ports import ToolOutput
from agent_lsp.llm.anthropic import AnthropicProvider
from agent_lsp.llm.openai import OpenAIProvider
from agent_lsp.llm.transport import Timeouts
from agent_lsp.store import SessionStore
from llm_fake_server import Reply, recording


class WeatherArgs(BaseModel):
    city: str


class WeatherTool:
    name = "get_weather"
    description = "Current weather of a city"
    input_model = WeatherArgs

    def is_parallel(self, args: BaseModel) -> bool:
        return True

    async def run(self, args: WeatherArgs, ctx) -> ToolOutput:
        return ToolOutput(content=f"18C in {args.city}")


def events(agent: Agent, kind: str) -> list[dict]:
    return [e.data for e in agent.session.events if e.type == kind]


async def run_turn(agent: Agent, text: str) -> None:
    agent.followup(text)
    await asyncio.wait_for(agent.when_idle(), 10)


async def test_loop_retries_rate_limit_and_reset_then_succeeds(server, tmp_path):
    provider = OpenAIProvider(base_url=server.url + "/v1", api_key="sk-test", timeouts=Timeouts(2, 2, 2))
    server.queue(
        Reply.json(429, {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}, {"retry-after-ms": "10"}),
        Reply(parts=[recording("openai_text.sse")[:700]], end="reset"),
        Reply.sse(recording("openai_text.sse")),
    )
    session = SessionStore(tmp_path).create()
    agent = Agent(
        session,
        providers={"openai": provider},
        options=AgentOptions(provider="openai", model="gpt-4.1-nano", retry=RetryOptions(base_delay_s=0.01, max_delay_s=0.05)),
    )
    await run_turn(agent, "hi")
    retries = events(agent, "llm/retry")
    assert [r["failure"]["code"] for r in retries] == ["RATE_LIMIT", "NETWORK"]
    assert retries[0]["delayMs"] == 10  # the server's retry-after-ms, not the backoff
    messages = events(agent, "assistant/message")
    assert len(messages) == 1
    assert "".join(b.get("text", "") for b in messages[0]["message"]["content"]) == "Héllo, 世界 🌍!"
    assert [e["reason"]["kind"] for e in events(agent, "turn/end")] == ["completed"]
    assert len(server.requests) == 3
    await agent.dispose()
    await provider.aclose()


async def test_loop_does_not_retry_quota(server, tmp_path):
    provider = OpenAIProvider(base_url=server.url + "/v1", api_key="sk-test", timeouts=Timeouts(2, 2, 2))
    server.queue(Reply.json(429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}))
    agent = Agent(SessionStore(tmp_path).create(), providers={"openai": provider}, options=AgentOptions(provider="openai", model="gpt-4.1-nano"))
    await run_turn(agent, "hi")
    assert events(agent, "llm/retry") == []
    assert [e["reason"]["kind"] for e in events(agent, "turn/end")] == ["error"]
    assert len(server.requests) == 1
    await agent.dispose()
    await provider.aclose()


async def test_anthropic_tool_round_trip_passes_thinking_back(server, tmp_path):
    provider = AnthropicProvider(base_url=server.url, api_key="sk-ant-test", timeouts=Timeouts(2, 2, 2))
    server.queue(Reply.sse(recording("anthropic_thinking_tool.sse")), Reply.sse(recording("anthropic_text.sse")))
    agent = Agent(
        SessionStore(tmp_path).create(),
        providers={"anthropic": provider},
        tools=ToolRegistry([WeatherTool()]),
        options=AgentOptions(provider="anthropic", model="claude-sonnet-4-5", system_prompt="Be brief."),
    )
    await run_turn(agent, "weather in Paris?")
    assert [e["reason"]["kind"] for e in events(agent, "turn/end")] == ["completed"]
    second = server.requests[1].body
    assert second["tools"][0]["name"] == "get_weather"
    assert second["tools"][0]["input_schema"]["properties"]["city"]["type"] == "string"
    assistant, results = second["messages"][1], second["messages"][2]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Let me check the weather in Paris.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    }
    assert assistant["content"][-1] == {
        "type": "tool_use", "id": "toolu_01KFbKqPYSuAKujiL6mTfzYA", "name": "get_weather", "input": {"city": "Paris"},
    }
    assert results["role"] == "user"
    assert results["content"][0]["type"] == "tool_result"
    assert results["content"][0]["tool_use_id"] == "toolu_01KFbKqPYSuAKujiL6mTfzYA"
    assert "18C in Paris" in str(results["content"][0]["content"])
    usage = events(agent, "assistant/message")[-1].get("usage")
    assert usage["cacheReadTokens"] == 2048
    assert server.hangups == []  # both requests went over one pooled connection
    await agent.dispose()
    await provider.aclose()


def _openai_sse(chunks: list[dict]) -> bytes:
    import json

    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


async def test_a_reply_cut_while_writing_tool_calls_keeps_the_complete_ones(server, tmp_path):
    """A small local model runs into the output limit in its second call: the first
    call runs, the cut one is dropped, and the model gets the first one's result."""
    def call(index: int, call_id: str, arguments: str) -> dict:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": call_id, "type": "function",
                "function": {"name": "get_weather", "arguments": arguments}}]}, "finish_reason": None}]}

    cut = _openai_sse([
        call(0, "call_a", '{"city": "Paris"}'),
        call(1, "call_b", '{"city": "Lo'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    ])
    done = _openai_sse([
        {"choices": [{"index": 0, "delta": {"content": "Paris is mild."}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ])
    server.queue(Reply.sse(cut), Reply.sse(done))
    provider = OpenAIProvider(base_url=server.url + "/v1", api_key="sk-test", timeouts=Timeouts(2, 2, 2))
    agent = Agent(SessionStore(tmp_path).create(), providers={"openai": provider}, tools=ToolRegistry([WeatherTool()]),
                  options=AgentOptions(provider="openai", model="gpt-4.1-nano"))
    await run_turn(agent, "weather in Paris and London?")
    assert [c["callId"] for c in events(agent, "tool/call")] == ["call_a"]
    second = server.requests[-1].body["messages"]
    assert second[-1]["role"] == "tool" and "18C in Paris" in second[-1]["content"]
    assert [e["reason"]["kind"] for e in events(agent, "turn/end")] == ["completed"]
