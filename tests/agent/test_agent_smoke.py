from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore

from agent_helpers import FnTool, settle, turn_ends, types_of


async def test_smoke_followup_tool_and_reload(tmp_path):
    store = SessionStore(tmp_path)
    session = store.create(title="smoke")
    provider = ScriptedProvider([
        {"text": "reading", "tools": [{"name": "echo", "arguments": {"x": 1}}]},
        {"text": "done"},
    ])
    agent = Agent(session, providers={"scripted": provider}, tools=ToolRegistry([FnTool("echo")]),
                  options=AgentOptions(provider="scripted", model="m"))
    agent.followup("hi")
    await settle(agent)
    assert turn_ends(agent) == ["completed"]
    assert [m["role"] for m in agent.derive_messages()] == ["user", "assistant", "tool", "assistant"]
    assert "tool/result" in types_of(agent)
    await agent.dispose()
    del agent, session
    store2 = SessionStore(tmp_path)
    loaded = store2.load(store2.list()[0].id)
    assert loaded.events[-1].type == "session/end-seed"
    assert store2.list()[0].turns == 1
