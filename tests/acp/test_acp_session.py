"""The ACP face through the real `agent-lsp acp` process, driven by the ACP Python SDK's client."""

from __future__ import annotations

import asyncio
import json
import time

import acp
import pytest

from acp_harness import AGENT, AcpTestClient, acp_agent, updates_json

EDIT = {"name": "edit_file", "arguments": {"path": "app.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}}
ASK_WRITES = {"permissions": {"defaults": {"write": "ask"}}}


TEXT_CHUNKS = ("agent_message_chunk", "agent_thought_chunk")


def replayable(updates: list) -> list[dict]:
    """What a live client was sent that a load replays too (the command list is sent anew),
    with consecutive text chunks of one kind joined: the face coalesces deltas that wait to
    be sent, so live and replay may cut the same text at different places."""
    out: list[dict] = []
    for u in updates_json(updates):
        if u["sessionUpdate"] in ("available_commands_update", "user_message_chunk"):
            continue
        if out and u["sessionUpdate"] in TEXT_CHUNKS and out[-1]["sessionUpdate"] == u["sessionUpdate"]:
            out[-1]["content"]["text"] += u["content"]["text"]
        else:
            out.append(u)
    return out


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "app.py").write_text("x = 1\n")
    return folder


async def test_initialize_advertises_what_the_face_does(tmp_path):
    client = AcpTestClient()
    async with acp.spawn_agent_process(client, *AGENT) as (conn, _):
        reply = await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), 30)
    caps = reply.agent_capabilities
    assert reply.protocol_version == 1 and reply.agent_info.name == "agent-lsp"
    assert caps.load_session is True and caps.session_capabilities.list is not None
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.image and not caps.prompt_capabilities.audio
    assert caps.mcp_capabilities.http and not caps.mcp_capabilities.sse  # client MCP servers: stdio and http
    assert reply.field_meta["steering"] == {"supported": True}  # `_session/steering` is served


async def test_prompt_streams_asks_edits_through_the_client_cancels_and_load_replays(tmp_path, workspace):
    path = str(workspace / "app.py")
    client = AcpTestClient(buffers={path: "x = 1  # unsaved\n"}, answers=["allow_once"])
    script = [
        {"text": "Fixing.", "tools": [EDIT]},
        {"text": "Done."},
        {"hang": "thinking about it"},
    ]
    sessions = tmp_path / "sessions"
    async with acp_agent(client, sessions, script, **ASK_WRITES) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("fix x")]), 30)
        assert answer.stop_reason == "end_turn"
        assert client.text(sid) == "Fixing.Done."
        kinds = client.kinds(sid)
        # the text before the edit and the text after it, in order around the tool call
        assert kinds.index("tool_call") < kinds.index("tool_call_update") < len(kinds) - 1 - kinds[::-1].index("agent_message_chunk")
        call = next(u for u in client.of(sid) if u.session_update == "tool_call")
        assert (call.kind, call.title, call.status) == ("edit", "Edit app.py", "pending")
        assert [loc.path for loc in call.locations] == [path]
        # the permission question named the same tool call
        (asked, options), = client.permission_requests
        assert asked.tool_call_id == call.tool_call_id and asked.kind == "edit"
        assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
        # it shows the edit it asks about: the diff of the client's text, before anything is written
        (preview,) = asked.content
        assert (preview.type, preview.path, preview.old_text, preview.new_text) == (
            "diff", path, "x = 1  # unsaved\n", "x = 2  # unsaved\n")
        assert [loc.path for loc in asked.locations] == [path]
        # the edit went to the client's buffer (its unsaved text), not to the disk
        assert client.writes == [(path, "x = 2  # unsaved\n")]
        assert (workspace / "app.py").read_text() == "x = 1\n"
        done = next(u for u in client.of(sid) if u.session_update == "tool_call_update")
        assert done.status == "completed"
        diff = next(c for c in done.content if c.type == "diff")
        assert (diff.path, diff.old_text, diff.new_text) == (path, "x = 1  # unsaved\n", "x = 2  # unsaved\n")

        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("and more")]))
        for _ in range(500):
            if client.text(sid).endswith("thinking about it"):
                break
            await asyncio.sleep(0.01)
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(running, 5)
        waited = time.monotonic() - started
        assert cancelled.stop_reason == "cancelled"
        assert waited < 1.0, f"cancel answered after {waited:.3f} s"  # the bench measures the 100 ms target
        await asyncio.sleep(0.2)  # anything the cancelled turn still sends
        live = replayable(client.of(sid))

    reloaded = AcpTestClient(buffers={path: "x = 2  # unsaved\n"})
    async with acp_agent(reloaded, sessions, []) as conn:
        await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), 30)
        assert replayable(reloaded.of(sid)) == live
        prompts = [u.content.text for u in reloaded.of(sid) if u.session_update == "user_message_chunk"]
        assert prompts == ["fix x", "and more"]
        assert "available_commands_update" in reloaded.kinds(sid)


async def test_a_stale_buffer_reaches_the_model_and_nothing_is_overwritten(tmp_path, workspace):
    path = str(workspace / "app.py")
    client = AcpTestClient(buffers={path: "x = 1\n"})
    reads = []

    def user_types(read_path):  # the second read (the check before writing) sees the user's typing
        reads.append(read_path)
        if len(reads) == 2:
            client.buffers[path] = "x = 1\ny = 5  # typed meanwhile\n"

    client.on_read = user_types
    async with acp_agent(client, tmp_path / "sessions", [{"tools": [EDIT]}, {"text": "I see."}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("fix")]), 30)
    assert client.writes == []  # never a silent overwrite
    assert client.buffers[path] == "x = 1\ny = 5  # typed meanwhile\n"
    result = next(u for u in client.of(sid) if u.session_update == "tool_call_update")
    assert result.status == "failed"
    seen = result.content[-1].content.text  # what the model got as the tool's result
    assert "changed in the editor" in seen and "y = 5  # typed meanwhile" in seen


async def test_without_fs_capabilities_edits_go_to_disk(tmp_path, workspace):
    client = AcpTestClient()  # no fs capability
    async with acp_agent(client, tmp_path / "sessions", [{"tools": [EDIT]}, {"text": "ok"}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("fix")]), 30)
    assert answer.stop_reason == "end_turn" and client.reads == [] and client.writes == []
    assert (workspace / "app.py").read_text() == "x = 2\n"


async def test_the_permission_question_shows_the_diff_the_tool_call_shows_when_done(tmp_path, workspace):
    lines = [f"line {n}\n" for n in range(1, 31)]
    (workspace / "long.py").write_text("".join(lines))
    two_regions = {"name": "edit_file", "arguments": {"path": "long.py", "edits": [
        {"oldText": "line 2\n", "newText": "line two\n"}, {"oldText": "line 25\n", "newText": "line twenty-five\n"}]}}
    new_file = {"name": "write_file", "arguments": {"path": "notes.md", "content": "# Notes\n"}}
    client = AcpTestClient(answers=["allow_once", "allow_once"])  # no fs: the question reads the disk
    script = [{"tools": [two_regions]}, {"tools": [new_file]}, {"text": "ok"}]
    async with acp_agent(client, tmp_path / "sessions", script, **ASK_WRITES) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("edit")]), 30)
    assert answer.stop_reason == "end_turn"
    (edit_asked, _), (write_asked, _) = client.permission_requests
    done = [u for u in client.of(sid) if u.session_update == "tool_call_update" and u.status == "completed"]
    asked_diffs = [c.model_dump(by_alias=True) for c in edit_asked.content]
    assert asked_diffs == [c.model_dump(by_alias=True) for c in done[0].content if c.type == "diff"]
    assert [(d["oldText"].count("\n"), "line two" in d["newText"], "line twenty-five" in d["newText"])
            for d in asked_diffs] == [(5, True, False), (7, False, True)]  # each region with its context
    (created,) = write_asked.content
    assert (created.path, created.old_text, created.new_text) == (str(workspace / "notes.md"), None, "# Notes\n")
    assert (workspace / "notes.md").read_text() == "# Notes\n"


async def test_the_models_plan_is_the_clients_plan_live_and_on_load(tmp_path, workspace):
    items = [{"content": "read app.py", "status": "completed"}, {"content": "set x to 2", "status": "in_progress",
                                                                 "priority": "high"}]
    client = AcpTestClient()
    script = [{"tools": [{"name": "todo_write", "arguments": {"items": items}}]}, {"text": "planned"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("plan it")]), 30)
        live = [u for u in updates_json(client.of(sid)) if u["sessionUpdate"] == "plan"]
        assert live == [{"sessionUpdate": "plan", "entries": [
            {"content": "read app.py", "priority": "medium", "status": "completed"},
            {"content": "set x to 2", "priority": "high", "status": "in_progress"}]}]
        call = next(u for u in client.of(sid) if u.session_update == "tool_call")
        assert (call.kind, call.title) == ("think", "Update the plan")  # not an anonymous "other" tool
        reloaded = AcpTestClient()
    async with acp_agent(reloaded, tmp_path / "sessions") as conn:
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert [u for u in updates_json(reloaded.of(sid)) if u["sessionUpdate"] == "plan"] == live


async def test_plan_mode_is_a_session_mode_that_refuses_edits(tmp_path, workspace):
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", [{"tools": [EDIT]}, {"text": "could not edit"}]) as conn:
        created = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = created.session_id
        assert created.modes.current_mode_id == "default"
        assert [m.id for m in created.modes.available_modes] == ["default", "plan"]
        with pytest.raises(acp.RequestError, match="unknown mode 'yolo'"):
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("fix")]), 30)
        kinds = [u["sessionUpdate"] for u in updates_json(client.of(sid))]
        assert "current_mode_update" in kinds
        failed = [u for u in client.of(sid) if u.session_update == "tool_call_update"]
        assert [u.status for u in failed] == ["failed"] and "Plan mode is on" in failed[0].content[-1].content.text
        reloaded = AcpTestClient()
    assert (workspace / "app.py").read_text() == "x = 1\n"
    async with acp_agent(reloaded, tmp_path / "sessions") as conn:
        loaded = await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "plan"


async def test_allow_always_is_remembered_in_the_workspace_store(tmp_path, workspace):
    run = {"name": "run_command", "arguments": {"command": "echo hello-acp"}}
    client = AcpTestClient(answers=["allow_always"])
    sessions = tmp_path / "sessions"
    async with acp_agent(client, sessions, [{"tools": [run]}, {"tools": [run]}, {"text": "ran twice"}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("run it")]), 30)
    assert len(client.permission_requests) == 1  # the second run was allowed by the remembered answer
    asked = client.permission_requests[0][0]
    assert asked.kind == "execute" and "echo hello-acp" in asked.title
    results = [u for u in client.of(sid) if u.session_update == "tool_call_update"]
    assert [r.status for r in results] == ["completed", "completed"]
    assert all("hello-acp" in r.content[-1].content.text for r in results)  # the command's output
    calls = [u for u in client.of(sid) if u.session_update == "tool_call"]
    assert all(c.kind == "execute" for c in calls)
    stored = [json.loads(p.read_text()) for p in sessions.rglob("permissions.json")]
    assert stored and "echo hello-acp" in json.dumps(stored)


async def test_a_prompt_sent_while_one_runs_is_queued_and_steering_reaches_the_running_turn(tmp_path, workspace):
    client = AcpTestClient()
    script = [{"text": "slow answer", "chunkDelayMs": 30}, {"text": "second"}, {"text": "third"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        first = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("one")]))
        while not client.text(sid):
            await asyncio.sleep(0.01)
        steered = await conn.ext_method("agent-lsp/steer", {"sessionId": sid, "prompt": "mind the tests"})
        second = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("two")]))
        assert (await asyncio.wait_for(first, 30)).stop_reason == "end_turn"
        assert (await asyncio.wait_for(second, 30)).stop_reason == "end_turn"
    assert steered["delivery"] == "steer"
    # the steer entered the first turn (a second step answered "second"); the queued prompt ran next
    assert client.text(sid) == "slow answersecondthird"


async def test_bad_requests_get_readable_errors(tmp_path, workspace):
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", []) as conn:
        with pytest.raises(acp.RequestError) as unknown:
            await conn.prompt(session_id="s_nope", prompt=[acp.text_block("hi")])
        assert unknown.value.code == -32602 and "unknown session s_nope" in str(unknown.value)
        with pytest.raises(acp.RequestError) as relative:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        assert "absolute" in str(relative.value)
        with pytest.raises(acp.RequestError) as missing:
            await conn.load_session(cwd=str(workspace), session_id="s_missing", mcp_servers=[])
        assert "unknown session s_missing" in str(missing.value)
        # the connection is still fine
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        assert (await conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])).stop_reason == "end_turn"


async def test_model_failure_is_an_error_answer_with_its_message(tmp_path, workspace):
    client = AcpTestClient()
    script = [{"fail": "AUTH", "message": "the key was refused"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        with pytest.raises(acp.RequestError) as failed:
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("hi")]), 30)
    assert "AUTH" in str(failed.value) and "the key was refused" in str(failed.value)


async def test_sessions_are_listed_and_slash_commands_are_offered(tmp_path, workspace):
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", [{"tools": [EDIT]}, {"text": "edited"}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("edit")])
        assert (workspace / "app.py").read_text() == "x = 2\n"
        listed = await conn.list_sessions(cwd=str(workspace))
        assert [(s.session_id, s.cwd) for s in listed.sessions] == [(sid, str(workspace))]
        commands = next(u for u in client.of(sid) if u.session_update == "available_commands_update")
        assert {c.name for c in commands.available_commands} == {"compact", "revert", "new"}
        answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("/revert")])
        assert answer.stop_reason == "end_turn"
        assert (workspace / "app.py").read_text() == "x = 1\n"
        assert client.text(sid).endswith("Reverted turn 1: 1 file(s) restored.")


async def test_commands_run_in_the_client_terminal_when_it_offers_terminals(tmp_path, workspace):
    run = {"name": "run_command", "arguments": {"command": "echo in-terminal; pwd; exit 3"}}
    slow = {"name": "run_command", "arguments": {"command": "sleep 30"}}
    client = AcpTestClient(terminals=True, answers=["allow_once", "allow_once"])
    async with acp_agent(client, tmp_path / "sessions", [{"tools": [run]}, {"text": "ran"}, {"tools": [slow]}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("run")]), 30)
        (first,) = client.terminal_runs.values()
        assert first["command"] == ["bash", "-c", "echo in-terminal; pwd; exit 3"] and first["cwd"] == str(workspace)
        assert first["released"]
        updates = [u for u in client.of(sid) if u.session_update == "tool_call_update"]
        showing, result = updates
        assert showing.status == "in_progress" and showing.content[0].terminal_id == "term_1"
        seen = result.content[-1].content.text
        assert "in-terminal" in seen and str(workspace) in seen and "[exit code 3]" in seen
        assert len(client.permission_requests) == 1
        (asked, _), = client.permission_requests  # where it runs, said plainly
        assert "(not sandboxed: it runs in the client's terminal)" in asked.title, asked.title

        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("wait")]))
        while len(client.terminal_runs) < 2:
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(running, 5)).stop_reason == "cancelled"
        second = client.terminal_runs["term_2"]
        for _ in range(300):
            if second["released"]:
                break
            await asyncio.sleep(0.01)
        assert second["process"].returncode is not None and second["released"]  # killed, then released


async def test_the_configured_models_are_a_config_option_the_client_can_switch(tmp_path, workspace):
    client = AcpTestClient()
    sessions = tmp_path / "sessions"
    model = {"fallback": {"model": "scripted-small"}}
    async with acp_agent(client, sessions, [{"text": "one"}, {"text": "two"}], model_extra=model) as conn:
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        (option,) = new.config_options
        assert (option.id, option.category, option.current_value) == ("model", "model", "scripted/scripted")
        assert [o.value for o in option.options] == ["scripted/scripted", "scripted/scripted-small"]
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("first")])
        switched = await conn.set_config_option(config_id="model", session_id=new.session_id,
                                                value="scripted/scripted-small")
        assert switched.config_options[0].current_value == "scripted/scripted-small"
        await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("second")])
        with pytest.raises(acp.RequestError) as unknown:
            await conn.set_config_option(config_id="model", session_id=new.session_id, value="gpt-9")
        assert "unknown model 'gpt-9'" in str(unknown.value) and "scripted/scripted-small" in str(unknown.value)
    log = [json.loads(line) for line in next(sessions.rglob(f"{new.session_id}.jsonl")).read_text().splitlines()]
    log = [e for e in log if "type" in e]  # the events (after the file's header)
    answered = [e["data"]["message"]["model"] for e in log if e["type"] == "assistant/message"]
    assert answered == ["scripted", "scripted-small"]
    # recorded as agent/session/setModel records it: a load (by either face) goes on with that model
    (switch,) = [e["data"] for e in log if e["type"] == "session/model"]
    assert (switch["provider"], switch["model"], switch["previousModel"]) == ("scripted", "scripted-small", "scripted")
    reloaded = AcpTestClient()
    async with acp_agent(reloaded, sessions, [], model_extra=model) as conn:
        loaded = await conn.load_session(cwd=str(workspace), session_id=new.session_id, mcp_servers=[])
    assert loaded.config_options[0].current_value == "scripted/scripted-small"


async def test_a_prompt_sent_right_after_a_cancel_runs(tmp_path, workspace):
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", [{"hang": "waiting"}, {"text": "next one"}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        hanging = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("one")]))
        while "waiting" not in client.text(sid):
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=sid)
        following = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("two")]), 30)
        assert (await hanging).stop_reason == "cancelled"
        assert following.stop_reason == "end_turn"
        assert client.text(sid) == "waitingnext one"


async def test_text_is_streamed_as_it_comes_and_a_fast_stream_is_coalesced(tmp_path, workspace):
    client = AcpTestClient()
    script = [{"text": "slow", "chunkDelayMs": 40}, {"text": "f" * 5000, "tools": [EDIT]}, {"text": "after"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("slowly")]), 30)
        slow = [u.content.text for u in client.of(sid) if u.session_update == "agent_message_chunk"]
        assert "".join(slow) == "slow" and len(slow) == 4  # each delta shown when it arrived
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("fast")]), 30)
    updates = client.of(sid)
    call = next(i for i, u in enumerate(updates) if u.session_update == "tool_call")
    before = [u.content.text for u in updates[:call] if u.session_update == "agent_message_chunk"]
    after = [u.content.text for u in updates[call:] if u.session_update == "agent_message_chunk"]
    # every character arrives, on its side of the tool call, in far fewer notifications than deltas
    assert "".join(before) == "slow" + "f" * 5000 and "".join(after) == "after"
    assert len(before) - 4 < 500


async def test_session_steering_joins_the_running_turn_or_says_what_happened_when_idle(tmp_path, workspace):
    client = AcpTestClient()
    script = [{"text": "slow answer", "chunkDelayMs": 30}, {"text": "steered"}, {"text": "started"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        idle = {"steering": {"idleBehavior": "promptRequired"}}
        asked = await conn.ext_method("session/steering", {"sessionId": sid, "prompt": [{"type": "text", "text": "x"}], "_meta": idle})
        assert asked == {"outcome": "promptRequired", "reason": "noRunningTurn"}  # nothing sent: the client prompts
        first = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("one")]))
        while not client.text(sid):
            await asyncio.sleep(0.01)
        steered = await conn.ext_method("session/steering", {"sessionId": sid, "prompt": [{"type": "text", "text": "use tabs"}],
                                                             "_meta": idle})
        assert steered["outcome"] == "injected"
        assert (await asyncio.wait_for(first, 30)).stop_reason == "end_turn"
        assert client.text(sid) == "slow answersteered"  # the steer made a second step of the same turn
        started = await conn.ext_method("session/steering", {"sessionId": sid, "prompt": [{"type": "text", "text": "go on"}]})
        assert started["outcome"] == "startedNewTurn"
        for _ in range(500):
            if client.text(sid).endswith("started"):
                break
            await asyncio.sleep(0.01)
        assert client.text(sid) == "slow answersteeredstarted"
        with pytest.raises(acp.RequestError) as empty:
            await conn.ext_method("session/steering", {"sessionId": sid, "prompt": []})
        assert empty.value.code == -32602 and "prompt" in str(empty.value)


async def test_queued_prompts_are_shown_to_the_client_and_can_be_taken_out(tmp_path, workspace):
    client = AcpTestClient()
    script = [{"text": "slow answer", "chunkDelayMs": 30}, {"text": "kept"}]
    async with acp_agent(client, tmp_path / "sessions", script) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        first = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("one")]))
        while not client.text(sid):
            await asyncio.sleep(0.01)
        dropped = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("two")]))
        kept = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("three")]))

        def queue() -> list[str]:
            shown = [p for m, p in client.notifications if m == "agent-lsp/queue" and p["sessionId"] == sid]
            return [e["text"] for e in shown[-1]["queue"]] if shown else []

        for _ in range(500):
            if queue() == ["two", "three"]:
                break
            await asyncio.sleep(0.01)
        assert queue() == ["two", "three"]
        last = [p for m, p in client.notifications if m == "agent-lsp/queue"][-1]
        two = next(e["messageId"] for e in last["queue"] if e["text"] == "two")
        assert (await conn.ext_method("agent-lsp/queue/remove", {"sessionId": sid, "messageId": two})) == {"removed": True}
        assert (await asyncio.wait_for(dropped, 5)).stop_reason == "cancelled"
        assert (await conn.ext_method("agent-lsp/queue/remove", {"sessionId": sid, "messageId": two})) == {"removed": False}
        assert (await asyncio.wait_for(first, 30)).stop_reason == "end_turn"
        assert (await asyncio.wait_for(kept, 30)).stop_reason == "end_turn"
        await asyncio.sleep(0.1)
        assert queue() == []  # the last prompt was taken by its turn
    assert client.text(sid) == "slow answerkept"


async def test_new_starts_an_empty_session_that_every_face_lists(tmp_path, workspace):
    client = AcpTestClient()
    async with acp_agent(client, tmp_path / "sessions", [{"text": "hi"}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("hello")])
        assert (await conn.prompt(session_id=sid, prompt=[acp.text_block("/new")])).stop_reason == "end_turn"
        listed = {s.session_id for s in (await conn.list_sessions(cwd=str(workspace))).sessions}
        (fresh,) = listed - {sid}
        assert f"Started session {fresh}" in client.text(sid)
        await conn.load_session(cwd=str(workspace), session_id=fresh, mcp_servers=[])
        assert "agent_message_chunk" not in client.kinds(fresh)  # empty: nothing to replay


class SilentAboutPermissions(AcpTestClient):
    """Never answers a permission question."""

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permission_requests.append((tool_call, options))
        await asyncio.Event().wait()


class FailingPermissions(AcpTestClient):
    async def request_permission(self, session_id, tool_call, options, **kwargs):
        raise acp.RequestError.internal_error({"why": "the question broke"})


@pytest.mark.parametrize("client_type, told", [
    (SilentAboutPermissions, "Nobody answered within 1 s"),
    (FailingPermissions, "The question could not be asked"),
], ids=["no answer", "a failed question"])
async def test_a_question_nobody_answered_is_not_called_the_users_denial(tmp_path, workspace, client_type, told):
    client = client_type()
    script = [{"tools": [EDIT]}, {"text": "ok"}]
    settings = {"permissions": {"defaults": {"write": "ask"}, "askTimeoutSeconds": 1}}
    async with acp_agent(client, tmp_path / "sessions", script, **settings) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("edit")]), 30)
    failed = next(u for u in client.of(sid) if u.session_update == "tool_call_update" and u.status == "failed")
    shown = json.dumps([c.model_dump(by_alias=True) for c in failed.content or []]) + json.dumps(failed.raw_output)
    assert told in shown and "The user denied it" not in shown
    assert (workspace / "app.py").read_text() == "x = 1\n"
