"""Sub-agents through the real server: a parent's `subagent` calls run child
sessions in parallel that stream to the client, can be cancelled alone or
with the parent, account their usage to the parent, and survive a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_harness import EditorUnderTest, running_server

pytestmark = pytest.mark.asyncio

A_USAGE = [{"inputTokens": 11, "outputTokens": 5}, {"inputTokens": 23, "outputTokens": 4}]
B_USAGE = {"inputTokens": 7, "outputTokens": 3}


def subagent_call(call_id: str, description: str, task: str, agent_type: str | None = None) -> dict:
    arguments = {"description": description, "task": task}
    if agent_type:
        arguments["agentType"] = agent_type
    return {"name": "subagent", "id": call_id, "arguments": arguments}


def results_of(editor: EditorUnderTest, session_id: str) -> dict[str, dict]:
    return {e["data"]["callId"]: e["data"] for e in editor.events[session_id] if e["type"] == "tool/result"}


def children_of(editor: EditorUnderTest, parent: str) -> dict[str, str]:
    """callId -> child session id, from the parent's durable subagent/start events."""
    return {e["data"]["callId"]: e["data"]["childSessionId"] for e in editor.events[parent] if e["type"] == "subagent/start"}


def usage_sum(events: list[dict]) -> dict[str, int]:
    total: dict[str, int] = {}
    for e in events:
        if e["type"] == "assistant/message":
            for key, value in (e["data"].get("usage") or {}).items():
                total[key] = total.get(key, 0) + value
    return total


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("the notes say hello\n", encoding="utf-8")
    return root


async def test_two_subagents_in_one_step_one_cancelled_alone_then_reloaded(workspace: Path, tmp_path: Path):
    script = [
        {"when": "survey", "tools": [subagent_call("call_a", "read the notes", "TASK-A: read notes.txt"),
                                     subagent_call("call_b", "think long", "TASK-B: think")]},
        {"when": "TASK-A", "tools": [{"name": "read_file", "id": "a1", "arguments": {"path": "notes.txt"}}],
         "usage": A_USAGE[0]},
        {"when": "TASK-A", "text": "notes.txt says hello", "usage": A_USAGE[1]},
        {"when": "TASK-B", "hang": "thinking about it", "usage": B_USAGE},
        {"when": "survey", "text": "one answered, one was cancelled"},
    ]
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script) as editor:
        parent = (await editor.request("agent/followup", {"content": "please survey the workspace"}))["sessionId"]
        running = await editor.wait_for(
            lambda: len([s for s in editor.of("agent/subagent/status") if s["status"] == "running"]) == 2
            and editor.of("agent/subagent/status"), what="two sub-agents running")
        assert {s["sessionId"] for s in running} == {parent}
        children = children_of(editor, parent)
        assert set(children) == {"call_a", "call_b"} and len(set(children.values())) == 2
        child_a, child_b = children["call_a"], children["call_b"]
        # both children stream their own events to the client, under their own session ids
        await editor.wait_for(lambda: "thinking about it" in editor.streamed_text(child_b), what="B streaming")
        await editor.wait_for(lambda: "turn/end" in editor.event_types(child_a), what="A done")
        assert editor.streamed_text(child_a) == "notes.txt says hello"
        assert "call_b" not in results_of(editor, parent), "B is still running"

        assert await editor.request("agent/subagent/cancel", {"sessionId": child_b}) == {"cancelled": True}
        await editor.wait_idle(parent)

        results = results_of(editor, parent)
        answered, cancelled = results["call_a"], results["call_b"]
        assert answered["message"]["content"] == [{"type": "text", "text": "notes.txt says hello"}]
        assert not answered["message"].get("isError")
        assert cancelled["message"]["isError"] and cancelled["error"]["code"] == "SUBAGENT_CANCELLED"
        assert "the user cancelled it" in cancelled["message"]["content"][0]["text"]
        assert "thinking about it" in cancelled["message"]["content"][0]["text"]  # what it had said so far
        assert editor.streamed_text(parent) == "one answered, one was cancelled"
        # the parent's own turn went on: only the child was cancelled
        assert editor.events[parent][-1]["data"]["reason"]["kind"] == "completed"
        b_end = [e for e in editor.events[child_b] if e["type"] == "turn/end"][-1]["data"]["reason"]
        assert b_end == {"kind": "aborted", "reason": {"kind": "user"}}

        # usage: each child's model calls, summed into the parent's tool result
        assert answered["meta"]["subagent"]["usage"] == usage_sum(editor.events[child_a]) == {
            "inputTokens": 34, "outputTokens": 9}
        assert cancelled["meta"]["subagent"]["usage"] == usage_sum(editor.events[child_b]) == B_USAGE
        ended = {s["childSessionId"]: s for s in editor.of("agent/subagent/status") if s["status"] != "running"}
        assert ended[child_a]["status"] == "completed" and ended[child_b]["status"] == "cancelled"
        assert ended[child_a]["usage"] == {"inputTokens": 34, "outputTokens": 9}

        with pytest.raises(JsonRpcInvalidParams, match="not a running sub-agent"):
            await editor.request("agent/subagent/cancel", {"sessionId": child_a})

    # a new server (an editor restart) shows both child transcripts, linked to the parent
    async with running_server(folders=[workspace], sessions_dir=sessions) as editor:
        loaded = await editor.request("agent/session/load", {"sessionId": parent})
        links = [e["data"] for e in loaded["events"] if e["type"] == "subagent/start"]
        assert {(d["callId"], d["childSessionId"]) for d in links} == {("call_a", child_a), ("call_b", child_b)}
        for child, task in ((child_a, "TASK-A: read notes.txt"), (child_b, "TASK-B: think")):
            transcript = (await editor.request("agent/session/load", {"sessionId": child}))["events"]
            first = next(e for e in transcript if e["type"] == "user/message")
            assert first["data"]["message"]["content"] == [{"type": "text", "text": task}]
        a_events = (await editor.request("agent/session/load", {"sessionId": child_a}))["events"]
        assert [e["data"]["name"] for e in a_events if e["type"] == "tool/result"] == ["read_file"]
        listed = {s["sessionId"]: s for s in (await editor.request("agent/session/list", {}))["sessions"]}
        assert listed[child_a]["title"] == "read the notes"
        # the children name their parent and its call, so a session picker nests them under it
        assert (listed[child_a]["parentSessionId"], listed[child_a]["parentToolCallId"]) == (parent, "call_a")
        assert (listed[child_b]["parentSessionId"], listed[child_b]["parentToolCallId"]) == (parent, "call_b")
        assert "parentSessionId" not in listed[parent] and "parentToolCallId" not in listed[parent]


async def test_cancelling_the_parent_cancels_its_subagents(workspace: Path, tmp_path: Path):
    script = [
        {"when": "delegate", "tools": [subagent_call("call_x", "wait", "TASK-X: wait")]},
        {"when": "TASK-X", "hang": "waiting"},
    ]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", script=script) as editor:
        parent = (await editor.request("agent/followup", {"content": "delegate it"}))["sessionId"]
        child = await editor.wait_for(lambda: children_of(editor, parent).get("call_x"), what="child started")
        await editor.wait_for(lambda: "waiting" in editor.streamed_text(child), what="child streaming")
        await editor.request("agent/cancel", {"sessionId": parent})
        await editor.wait_idle(parent)
        await editor.wait_for(lambda: "turn/end" in editor.event_types(child), what="child ended")
        child_end = [e for e in editor.events[child] if e["type"] == "turn/end"][-1]["data"]["reason"]
        assert child_end == {"kind": "aborted", "reason": {"kind": "parent"}}
        assert editor.events[parent][-1]["data"]["reason"]["kind"] == "aborted"


async def test_a_child_gets_read_only_tools_unless_its_agent_type_widens_them(workspace: Path, tmp_path: Path):
    agents = workspace / ".agents" / "agents"
    agents.mkdir(parents=True)
    (agents / "scribe.md").write_text(
        "---\nname: scribe\ndescription: Writes files\ntools: read_file, write_file\n---\nYou write files.\n",
        encoding="utf-8")
    write = {"name": "write_file", "id": "w1", "arguments": {"path": "out.txt", "content": "written\n"}}
    script = [
        {"when": "delegate", "tools": [subagent_call("plain", "try to write", "TASK-PLAIN"),
                                       subagent_call("typed", "write", "TASK-TYPED", "scribe"),
                                       subagent_call("bogus", "no such type", "TASK-BOGUS", "nobody"),
                                       subagent_call("broken", "model fails", "TASK-BROKEN")]},
        {"when": "TASK-BROKEN", "fail": "AUTH", "message": "the key was refused"},
        {"when": "TASK-PLAIN", "tools": [dict(write, id="w0", arguments={"path": "plain.txt", "content": "x"})]},
        {"when": "TASK-PLAIN", "text": "could not write"},
        {"when": "TASK-TYPED", "tools": [write]},
        {"when": "TASK-TYPED", "text": "wrote out.txt"},
        {"when": "delegate", "text": "done"},
    ]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", script=script) as editor:
        parent = (await editor.request("agent/followup", {"content": "delegate it"}))["sessionId"]
        await editor.wait_idle(parent)
        results = results_of(editor, parent)
        assert results["typed"]["message"]["content"][0]["text"] == "wrote out.txt"
        assert results["typed"]["meta"]["subagent"]["agentType"] == "scribe"
        assert (workspace / "out.txt").read_text(encoding="utf-8") == "written\n"
        assert not (workspace / "plain.txt").exists()
        plain = children_of(editor, parent)["plain"]
        refused = [e["data"] for e in editor.events[plain] if e["type"] == "tool/result"][0]
        assert refused["error"]["code"] == "UNKNOWN_TOOL"
        assert results["bogus"]["error"]["code"] == "INVALID_ARGUMENTS"
        assert "unknown agent type 'nobody' (known: scribe)" in results["bogus"]["message"]["content"][0]["text"]
        # a child whose model fails: the parent's result says what happened
        assert results["broken"]["error"]["code"] == "SUBAGENT_FAILED"
        assert "The sub-agent failed: AUTH: the key was refused" in results["broken"]["message"]["content"][0]["text"]
        assert results["broken"]["meta"]["subagent"]["status"] == "failed"


async def test_a_crash_mid_child_is_repaired_in_both_sessions(workspace: Path, tmp_path: Path):
    script = [
        {"when": "delegate", "tools": [subagent_call("call_x", "wait", "TASK-X: wait")]},
        {"when": "TASK-X", "hang": "halfway"},
    ]
    sessions = tmp_path / "sessions"
    async with running_server(folders=[workspace], sessions_dir=sessions, script=script) as editor:
        parent = (await editor.request("agent/followup", {"content": "delegate it"}))["sessionId"]
        child = await editor.wait_for(lambda: children_of(editor, parent).get("call_x"), what="child started")
        await editor.wait_for(lambda: "halfway" in editor.streamed_text(child), what="child streaming")
        await editor.kill()

    async with running_server(folders=[workspace], sessions_dir=sessions) as editor:
        parent_events = (await editor.request("agent/session/load", {"sessionId": parent}))["events"]
        result = next(e["data"] for e in parent_events if e["type"] == "tool/result")
        assert result["callId"] == "call_x" and result["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
        assert parent_events[-2]["data"]["reason"] == {"kind": "interrupted"}  # then session/end-seed
        child_events = (await editor.request("agent/session/load", {"sessionId": child}))["events"]
        assert "halfway" in "".join(e["data"]["chunk"].get("text", "") for e in child_events
                                    if e["type"] == "assistant/chunk")
        assert [e["data"]["reason"] for e in child_events if e["type"] == "turn/end"] == [{"kind": "interrupted"}]
