"""The fixed prompt (system prompt and tool schemas) of the real server against a
model server with a 4k window, as llama.cpp runs one (it says its window at
`GET /props`, counts prompts by its own rule and rejects one over the window
with its exact error).

At 4k the first request's fixed part fits in 1,450 tokens (characters / 4),
the language tool included: the small tool set is offered (with the plan tool in plan mode; at 32k, every
tool). The clients'
context meter hears the fixed prompt's size with the window. Two folders'
first requests start with the same bytes up to the folder's own part (the
system prompt and every tool schema; the folder's roots and AGENTS.md come
after them, as the first message), so a shared server's prompt cache serves
both. A window too small for even the
small set is refused before anything is sent, saying why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lsprotocol import types

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer  # noqa: E402
from llm_window_server import WindowedModel  # noqa: E402
from lsp_harness import client_capabilities, running_server  # noqa: E402

SMALL_SET = {"read_file", "edit_file", "grep", "run_command", "language"}


def fixed_tokens(body: dict) -> int:
    """The fixed part of a chat-completions request, in characters / 4: the system
    message, the tool schemas and the folder's part (the first message) as sent."""
    system, workspace = body["messages"][:2]
    assert system["role"] == "system" and workspace["content"].startswith("Workspace roots:")
    chars = len(system["content"]) + len(workspace["content"])
    chars += len(json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False))
    return (chars + 3) // 4


def relaying_capabilities() -> types.ClientCapabilities:
    """An editor that answers the agent's language questions (the language tool is offered)."""
    capabilities = client_capabilities()
    capabilities.experimental["agentLsp"]["languageQuery"] = True
    return capabilities


async def first_turn(editor, folder: Path) -> list[dict]:
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "hello", "workspaceUri": folder.as_uri()}))["sessionId"]
    await editor.wait_idle(sid, before)
    return editor.events[sid]


async def test_a_4k_window_gets_a_fixed_prompt_under_1450_tokens_shared_across_folders(tmp_path: Path):
    folders = [tmp_path / "alpha", tmp_path / "beta-project"]
    for folder in folders:
        folder.mkdir()
        (folder / "AGENTS.md").write_text(f"Instructions of {folder.name}.\n", encoding="utf-8")
    fake = FakeServer()
    await fake.start()
    small, large = FakeServer(), FakeServer()
    await small.start()
    await large.start()
    model = WindowedModel(fake, 4096, tool="read_file", steps_per_turn=0)
    WindowedModel(small, 1024, tool="read_file", steps_per_turn=0)
    WindowedModel(large, 32768, tool="read_file", steps_per_turn=0)
    settings = {"model": {"provider": "openai", "model": "local-coder", "baseUrl": fake.url + "/v1", "apiKey": "k"},
                "language": {"enabled": True}}
    try:
        async with running_server(folders=folders, sessions_dir=tmp_path / "sessions", settings=settings,
                                  capabilities=relaying_capabilities()) as editor:
            events = [await first_turn(editor, folder) for folder in folders]
            # plan mode: the plan tool too
            sid = (await editor.request("agent/session/new", {}))["sessionId"]
            await editor.request("agent/session/mode", {"sessionId": sid, "mode": "plan"})
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "plan it"})
            await editor.wait_idle(sid, before)
            # a 1k window: refused before a request, with the sizes and what to do
            editor.configure({"model": {"provider": "openai", "model": "tiny-coder", "baseUrl": small.url + "/v1",
                                        "apiKey": "k"}})
            refused = await first_turn(editor, folders[0])
            # a 32k window: every tool
            editor.configure({"model": {"provider": "openai", "model": "big-coder", "baseUrl": large.url + "/v1",
                                        "apiKey": "k"}})
            await first_turn(editor, folders[0])
    finally:
        for server in (fake, small, large):
            await server.stop()

    first, second, planning = (seen.body for seen in fake.requests)
    assert {t["function"]["name"] for t in planning["tools"]} == SMALL_SET | {"todo_write"}
    assert {t["function"]["name"] for t in first["tools"]} == SMALL_SET
    assert fixed_tokens(first) <= 1450, fixed_tokens(first)
    assert model.rejected == []
    # the context meter: the window and the fixed prompt's share of it
    context = next(e["data"] for e in events[0] if e["type"] == "request/context")
    assert context["contextWindow"] == 4096
    assert abs(context["fixedTokens"] - fixed_tokens(first)) < 0.1 * fixed_tokens(first)

    # the same bytes up to the folder's own part: the system prompt (instructions, machine,
    # date) and the tools, then the folder's roots and AGENTS.md as the first message
    assert first["tools"] == second["tools"]
    assert first["messages"][0] == second["messages"][0] and str(folders[0]) not in first["messages"][0]["content"]
    one, two = (body["messages"][1]["content"] for body in (first, second))
    assert one.startswith(f"Workspace roots: {folders[0]}") and "Instructions of alpha." in one
    assert two.startswith(f"Workspace roots: {folders[1]}") and "Instructions of beta-project." in two

    reason = next(e["data"]["reason"] for e in refused if e["type"] == "turn/end")
    assert reason["kind"] == "error" and reason["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert "context window (1024 tokens) is too small" in reason["error"]["message"]
    assert small.requests == []

    (full,) = (seen.body for seen in large.requests)
    assert {t["function"]["name"] for t in full["tools"]} > SMALL_SET | {"glob", "list_dir", "write_file", "subagent"}
