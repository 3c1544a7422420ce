"""The prompt stays byte-identical from step to step, so provider prompt caches hit.

The real server talks to a real local HTTP model server (OpenAI or Anthropic
format) over a session of several turns and steps; the editor opens files
between turns and while a tool call waits on it (between two steps). Every
request must start with the previous request's prompt unchanged (system
prompt, tools, the folder's part, then history): what the editor shows
enters as a message at the end, and the project's AGENTS.md is re-read only
when it changes (and then only the folder's part changes).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import EditorUnderTest, running_server  # noqa: E402


def _sse(*events: tuple[str | None, dict | str]) -> bytes:
    out = b""
    for name, data in events:
        if name:
            out += f"event: {name}\n".encode()
        out += b"data: " + (data if isinstance(data, str) else json.dumps(data)).encode() + b"\n\n"
    return out


def openai_text(text: str, cached: int) -> Reply:
    return Reply.sse(_sse(
        (None, {"choices": [{"index": 0, "delta": {"content": text}}]}),
        (None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        (None, {"choices": [], "usage": {"prompt_tokens": 3000, "completion_tokens": 5,
                                         "prompt_tokens_details": {"cached_tokens": cached},
                                         "completion_tokens_details": {"reasoning_tokens": 2}}}),
        (None, "[DONE]"),
    ))


def openai_call(name: str, arguments: dict) -> Reply:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return Reply.sse(_sse(
        (None, {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}),
        (None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        (None, {"choices": [], "usage": {"prompt_tokens": 2900, "completion_tokens": 20}}),
        (None, "[DONE]"),
    ))


def _anthropic(blocks: list[tuple[dict, dict | None]], stop: str, cached: int) -> Reply:
    events: list[tuple[str | None, dict | str]] = [("message_start", {"type": "message_start", "message": {
        "usage": {"input_tokens": 100, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 50}}})]
    for index, (start, delta) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        if delta:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return Reply.sse(_sse(*events))


def anthropic_text(text: str, cached: int) -> Reply:
    return _anthropic([({"type": "text", "text": ""}, {"type": "text_delta", "text": text})], "end_turn", cached)


def anthropic_call(name: str, arguments: dict) -> Reply:
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    return _anthropic([(block, {"type": "input_json_delta", "partial_json": json.dumps(arguments)})], "tool_use", 0)


def _strip_cache_control(value):
    """Anthropic's cache breakpoints move to the newest turns; they mark the prompt, they are not part of it."""
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def prompt_parts(provider: str, body: dict) -> tuple[str, str, list[str]]:
    """(the bytes every folder's requests start with: system prompt and tools, then the
    folder's own part (a first message), then [each history message's bytes])."""
    body = _strip_cache_control(body)
    if provider == "openai":
        system, workspace, *history = body["messages"]
        head = json.dumps([system, body.get("tools")])
    else:
        first, *rest = body["messages"]  # Anthropic: the folder's part is the first block of the first turn
        workspace = first["content"][0]
        history = [{**first, "content": first["content"][1:]}, *rest]
        head = json.dumps([body.get("system"), body.get("tools")])
    return head, json.dumps(workspace), [json.dumps(m) for m in history]


def open_file(editor: EditorUnderTest, path: Path) -> None:
    editor.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.resolve().as_uri(), language_id="python", version=1, text=path.read_text(encoding="utf-8"))))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_the_prompt_prefix_stays_identical_while_files_open_between_steps(tmp_path: Path, provider: str):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name in ("a.py", "b.py", "c.py", "d.py"):
        (workspace / name).write_text(f"NAME = {name!r}\n", encoding="utf-8")
    (workspace / "AGENTS.md").write_text("Run the tests with pytest.\n", encoding="utf-8")
    text, call = (openai_text, openai_call) if provider == "openai" else (anthropic_text, anthropic_call)
    edit = {"path": "a.py", "edits": [{"oldText": "NAME", "newText": "TITLE"}]}
    fake = FakeServer()
    await fake.start()
    # turn 1: an edit (step 1) and the reply after it (step 2); turns 2-4: one reply each
    fake.queue(call("edit_file", edit), text("edited", 2048), text("two", 2048), text("three", 2560), text("four", 0))
    model = {"provider": provider, "model": "gpt-4.1" if provider == "openai" else "claude-sonnet-4-5",
             "baseUrl": fake.url + ("/v1" if provider == "openai" else ""), "apiKey": "test-key"}
    if provider == "openai":
        model["promptCacheKey"] = True
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                  settings={"model": model}) as editor:
            open_file(editor, workspace / "a.py")
            editor.hold_edits = asyncio.Event()  # the user looks at the edit: step 1 waits on the editor
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": "rename NAME"}))["sessionId"]
            await editor.wait_for(lambda: editor.applied_edits, what="the edit")
            open_file(editor, workspace / "b.py")  # opened between step 1 and step 2
            editor.hold_edits.set()
            await editor.wait_idle(sid, before)
            for name, say in (("c.py", "again"), ("d.py", "once more")):
                open_file(editor, workspace / name)  # opened between turns
                before = len(editor.statuses)
                await editor.request("agent/followup", {"sessionId": sid, "content": say})
                await editor.wait_idle(sid, before)
            # the project's instructions change: the next request carries them (once)
            (workspace / "AGENTS.md").write_text("Run the tests with pytest -q, always.\n", encoding="utf-8")
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "last"})
            await editor.wait_idle(sid, before)
            events = editor.events[sid]
    finally:
        await fake.stop()

    bodies = [seen.body for seen in fake.requests]
    assert len(bodies) == 5
    parts = [prompt_parts(provider, body) for body in bodies]
    heads = [head for head, _, _ in parts]
    workspaces = [workspace for _, workspace, _ in parts]
    # system prompt and tools: the same bytes for every request, the folder's part after them
    assert len(set(heads)) == 1 and str(workspace) not in heads[0] and "pytest" not in heads[0]
    # the folder's part (roots, AGENTS.md): the same until AGENTS.md changed
    assert workspaces[0] == workspaces[1] == workspaces[2] == workspaces[3] != workspaces[4]
    assert "pytest -q, always" in workspaces[4] and "pytest -q, always" not in workspaces[3]
    for name in ("a.py", "b.py", "c.py", "d.py"):
        assert name not in heads[3] + workspaces[3], "the open files are not in the fixed prompt"
    parts = [(head, history) for head, _, history in parts]
    # the history only grows at its end: each request starts with the previous one's history
    for (_, previous), (_, current) in zip(parts, parts[1:]):
        # (Anthropic merges consecutive same-role turns, so the last message of one request may grow in the next)
        assert current[: len(previous) - 1] == previous[:-1]
        assert current[len(previous) - 1].startswith(previous[-1][:-2])
    # what the editor shows reaches the model after the stable prefix, when it changed
    histories = [history for _, history in parts]
    assert "a.py" in histories[0][-1] and "b.py" not in "".join(histories[0])
    assert "b.py" in "".join(histories[1][len(histories[0]) - 1:])  # entered at step 2, after the edit
    assert "d.py" in "".join(histories[3][len(histories[2]) - 1:])

    headers = [e["data"] for e in events if e["type"] == "request/header"]
    assert [h["reason"] for h in headers] == ["initial", "change"]  # the change: AGENTS.md, in the last turn
    assert "pytest -q, always" in headers[1]["header"]["workspace"]
    contexts = [e["data"]["message"] for e in events if e["type"] == "user/message"
                and e["data"]["message"]["source"] == "runtime-context"]
    assert len(contexts) == 4  # a.py, +b.py, +c.py, +d.py; nothing new in the last turn

    usages = [e["data"]["usage"] for e in events if e["type"] == "assistant/message"]
    assert [u.get("cacheReadTokens") for u in usages][1:] == [2048, 2048, 2560, 0]
    if provider == "openai":
        assert {body["prompt_cache_key"] for body in bodies} == {sid}  # one cache key, the session's
        assert usages[1]["reasoningTokens"] == 2
    else:
        assert bodies[0]["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert usages[1]["cacheWriteTokens"] == 50
