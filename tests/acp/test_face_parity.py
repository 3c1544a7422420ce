"""One scripted scenario through both faces, the real language server and the real
`agent-lsp acp` process: a skill added between two turns, an MCP resource
attached with `@server:uri`, an edit in review mode, a steer while the model
answers, a cancel. The model is a local OpenAI-compatible server that records
every request; both faces must send it the same requests and tell their client
the same things (each in its own protocol)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import acp

from acp_harness import AcpTestClient, acp_agent
from llm_fake_server import FakeServer, Reply
from lsp_harness import running_server
from mcp_http_server import HttpMcpServer

TURN_S = 60.0  # the first attachment waits for the MCP server's first connection
SKILL_BODY = "Say hello in Portuguese: Olá."


class GatedModel(FakeServer):
    """The fake model; a reply with a `gate` is held (`held` set) until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.held = asyncio.Event()

    async def _reply(self, reply: Reply, reader: Any, writer: Any) -> bool:
        gate = getattr(reply, "gate", None)
        if gate is not None:
            self.held.set()
            await gate.wait()
        return await super()._reply(reply, reader, writer)


def sse(*chunks: dict) -> Reply:
    return Reply.sse(b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n")


def tool_call(call_id: str, name: str, arguments: dict) -> Reply:
    call = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return sse({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
               {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})


def gated(reply: Reply, gate: asyncio.Event) -> Reply:
    reply.gate = gate  # type: ignore[attr-defined]
    return reply


def scenario_replies(steer_gate: asyncio.Event) -> list[Reply]:
    return [
        Reply.openai_text("Hi."),                                                   # 1: hello
        tool_call("call_skill", "skill", {"name": "greet"}), Reply.openai_text("Olá!"),  # 2: the new skill
        tool_call("call_edit", "edit_file", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]}),
        Reply.openai_text("Edited."),                                               # 3: an edit under review
        gated(Reply.openai_text("Working."), steer_gate), Reply.openai_text("Brief."),   # 4: a steer
        Reply(end="stall"),                                                         # 5: cancelled
    ]


def settings(model: FakeServer, mcp: HttpMcpServer) -> dict:
    return {"model": {"provider": "openai", "baseUrl": f"{model.url}/v1", "apiKey": "k", "model": "m"},
            "mcpServers": {"web": {"type": "http", "url": mcp.url, "headers": {"Authorization": "Bearer secret-token"}}},
            "edits": {"review": "review"}}


def make_workspace(root: Path) -> Path:
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    (workspace / "a.txt").write_text("one\n", encoding="utf-8")
    return workspace


def add_skill(workspace: Path) -> None:
    folder = workspace / ".agents" / "skills" / "greet"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: greet\ndescription: Greets in Portuguese\n---\n{SKILL_BODY}\n",
                                     encoding="utf-8")


async def reached(event: asyncio.Event) -> None:
    await asyncio.wait_for(event.wait(), TURN_S)


def model_view(model: FakeServer, workspace: Path) -> list[Any]:
    """What the model received: each request's messages and tool names, the folder's path made neutral."""
    view = []
    for seen in model.requests:
        body = json.loads(json.dumps(seen.body).replace(str(workspace), "<ws>"))
        view.append({"messages": body["messages"], "tools": sorted(t["function"]["name"] for t in body.get("tools") or ())})
    return view


async def run_over_lsp(root: Path, mcp: HttpMcpServer) -> tuple[list[Any], dict[str, Any]]:
    workspace = make_workspace(root)
    model, gate = GatedModel(), asyncio.Event()
    await model.start()
    model.queue(*scenario_replies(gate))
    try:
        async with running_server(folders=[workspace], sessions_dir=root / "sessions", settings=settings(model, mcp)) as editor:
            async def turn(content: str, sid: str | None) -> str:
                statuses = len(editor.statuses)
                params = {"content": content, **({"sessionId": sid} if sid else {})}
                answer = editor.client.protocol.send_request_async("agent/followup", params)
                sid = (await asyncio.wait_for(answer, TURN_S))["sessionId"]
                await editor.wait_for(lambda: (sid, "idle") in editor.statuses[statuses:], timeout=TURN_S, what="idle")
                return sid

            sid = await turn("hello", None)
            add_skill(workspace)
            await turn("greet me as @web:docs://readme says", sid)
            await turn("change a.txt", sid)
            statuses = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "a long job"})
            await reached(model.held)
            await editor.request("agent/steer", {"sessionId": sid, "content": "be brief"})
            gate.set()
            await editor.wait_for(lambda: (sid, "idle") in editor.statuses[statuses:], timeout=TURN_S, what="idle")
            statuses = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "wait forever"})
            await reached(model.stall_started)
            await editor.request("agent/cancel", {"sessionId": sid})
            await editor.wait_for(lambda: (sid, "idle") in editor.statuses[statuses:], timeout=TURN_S, what="idle")
            hunks = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
            events = editor.events[sid]
            told = {
                "text": editor.streamed_text(sid),
                "results": [(e["data"]["callId"], bool(e["data"]["message"].get("isError")),
                             "".join(b.get("text", "") for b in e["data"]["message"]["content"]))
                            for e in events if e["type"] == "tool/result"],
                "stops": [e["data"]["reason"]["kind"] for e in events if e["type"] == "turn/end"],
                "file": (workspace / "a.txt").read_text(encoding="utf-8"),
                "pending": [(h["callId"], h["oldText"], h["newText"]) for h in hunks],
            }
    finally:
        await model.stop()
    return model_view(model, workspace), told


STOPS = {"end_turn": "completed", "cancelled": "aborted"}


async def run_over_acp(root: Path, mcp: HttpMcpServer) -> tuple[list[Any], dict[str, Any]]:
    workspace = make_workspace(root)
    model, gate = GatedModel(), asyncio.Event()
    await model.start()
    model.queue(*scenario_replies(gate))
    client = AcpTestClient()
    stops = []
    try:
        extra = settings(model, mcp)
        async with acp_agent(client, root / "sessions", None, model_extra=extra.pop("model"), **extra) as conn:
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id

            async def turn(text: str) -> None:
                answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block(text)]), TURN_S)
                stops.append(STOPS[answer.stop_reason])

            await turn("hello")
            add_skill(workspace)
            await turn("greet me as @web:docs://readme says")
            await turn("change a.txt")
            running = asyncio.ensure_future(turn("a long job"))
            await reached(model.held)
            await conn.ext_method("session/steering", {"sessionId": sid, "prompt": [{"type": "text", "text": "be brief"}]})
            gate.set()
            await running
            running = asyncio.ensure_future(turn("wait forever"))
            await reached(model.stall_started)
            await conn.cancel(session_id=sid)
            await running
            updates = client.of(sid)
            told = {
                "text": client.text(sid),
                "results": [(u.tool_call_id, u.status == "failed",
                             "".join(c.content.text for c in u.content or () if c.type == "content"))
                            for u in updates if u.session_update == "tool_call_update" and u.status in ("completed", "failed")],
                "stops": stops,
                "file": (workspace / "a.txt").read_text(encoding="utf-8"),
            }
    finally:
        await model.stop()
    return model_view(model, workspace), told


async def test_both_faces_send_the_model_the_same_and_tell_the_client_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no skills or agent types of the user's
    async with HttpMcpServer() as mcp:
        lsp_model, lsp_told = await run_over_lsp(tmp_path / "lsp", mcp)
        acp_model, acp_told = await run_over_acp(tmp_path / "acp", mcp)

    # the skill added after the first turn is offered and loaded in the second
    assert "skill" not in lsp_model[0]["tools"] and "skill" in lsp_model[1]["tools"]
    call_id, failed, result = lsp_told["results"][0]
    assert (call_id, failed) == ("call_skill", False) and SKILL_BODY in result
    # the resource rode with the second message; the edit waits for review; the steer reached the model
    assert "Call echo." in json.dumps(lsp_model[1]["messages"])
    assert lsp_told["file"] == "two\n" and [p[0] for p in lsp_told.pop("pending")] == ["call_edit"]
    assert "be brief" in json.dumps(lsp_model[6]["messages"])
    assert lsp_told["stops"] == ["completed", "completed", "completed", "completed", "aborted"]

    assert len(acp_model) == len(lsp_model) == 8
    for number, (over_acp, over_lsp) in enumerate(zip(acp_model, lsp_model), start=1):
        assert over_acp["tools"] == over_lsp["tools"], f"model request {number}: other tools offered over ACP"
        assert over_acp["messages"] == over_lsp["messages"], f"model request {number}: other messages over ACP"
    assert acp_told == lsp_told
