"""One real server (subprocess) shared by this module: a session over the wire.

Each test picks its scripted model with `editor.use_script(...)` (a
didChangeConfiguration the server applies before the next agent request).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcMethodNotFound

from lsp_harness import EditorUnderTest, running_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

BUGGY = "def add(a, b):\n    return a - b  # bug\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "calc.py").write_text(BUGGY, encoding="utf-8")
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(workspace, tmp_path_factory):
    async with running_server(folders=[workspace], sessions_dir=tmp_path_factory.mktemp("sessions")) as editor:
        yield editor


async def test_initialize_advertises_commands_and_code_actions(editor: EditorUnderTest):
    result = editor.initialize_result
    assert set(result.capabilities.execute_command_provider.commands) >= {
        "agentLsp.followup", "agentLsp.steer", "agentLsp.cancel", "agentLsp.newSession"
    }
    assert result.capabilities.code_action_provider
    assert result.server_info.name == "agent-lsp"
    created = await editor.command("agentLsp.newSession")
    assert created["sessionId"].startswith("s_")


async def test_followup_streams_events_then_goes_idle(editor: EditorUnderTest):
    editor.use_script([{"text": "hello there"}])
    before = len(editor.statuses)
    ref = await editor.request("agent/followup", {"content": "hi"})
    sid = ref["sessionId"]
    assert ref["messageId"]
    await editor.wait_idle(sid, before)
    types_ = editor.event_types(sid)
    assert types_[:2] == ["agent/inbox/spliced", "turn/start"]
    assert "assistant/message" in types_ and types_[-1] == "turn/end"
    assert types_.index("assistant/chunk") < types_.index("assistant/message") < types_.index("turn/end")
    assert editor.streamed_text(sid) == "hello there"
    seqs = [e["seq"] for e in editor.events[sid]]
    assert seqs == sorted(seqs) and seqs[0] == 0
    # coalesced chunks cover their seqs: no seq is missing
    covered = set()
    for e in editor.events[sid]:
        covered.update(range(e["seq"], e.get("lastSeq", e["seq"]) + 1))
    assert covered == set(range(len(covered)))
    assert [s for s in editor.statuses[before:] if s[0] == sid] == [(sid, "running"), (sid, "idle")]
    inserted = [p for p in editor.of("agent/inbox/inserted") if p["sessionId"] == sid]
    claimed = [p for p in editor.of("agent/inbox/claimed") if p["sessionId"] == sid]
    assert inserted[0]["message"]["id"] == ref["messageId"] and inserted[0]["target"] == "next-turn"
    assert claimed[0]["message"]["id"] == ref["messageId"] and claimed[0]["turn"] == 1
    end = editor.events[sid][-1]
    assert end["data"]["reason"]["kind"] == "completed" if isinstance(end["data"].get("reason"), dict) else True

    loaded = await editor.request("agent/session/load", {"sessionId": sid})
    assert loaded["status"] == "idle" and loaded["inbox"] == {"nextTurn": [], "nextStep": []}
    assert [e["seq"] for e in loaded["events"]] == list(range(len(loaded["events"])))
    assert "".join(
        e["data"]["chunk"].get("text", "") for e in loaded["events"] if e["type"] == "assistant/chunk"
    ) == "hello there"


async def test_steer_enters_the_running_turn(editor: EditorUnderTest):
    editor.use_script([{"text": "slow answer", "chunkDelayMs": 50}, {"text": "steered"}])
    before = len(editor.statuses)
    ref = await editor.request("agent/followup", {"content": "start"})
    sid = ref["sessionId"]
    await editor.wait_for(lambda: "assistant/chunk" in editor.event_types(sid), what="first chunk")
    steer = await editor.request("agent/steer", {"sessionId": sid, "content": "use tabs"})
    assert steer["sessionId"] == sid
    await editor.wait_idle(sid, before)
    user_texts = [
        b["text"]
        for e in editor.events[sid]
        if e["type"] == "user/message"
        for b in e["data"]["message"]["content"]
        if b.get("type") == "text"
    ]
    assert user_texts == ["start", "use tabs"]
    assert editor.event_types(sid).count("turn/start") == 1  # same turn, next step
    assert editor.streamed_text(sid) == "slow answersteered"


async def test_cancel_over_the_wire_ends_the_turn(editor: EditorUnderTest):
    editor.use_script([{"hang": "partial"}])
    before = len(editor.statuses)
    ref = await editor.request("agent/followup", {"content": "hang please"})
    sid = ref["sessionId"]
    await editor.wait_for(lambda: editor.streamed_text(sid) == "partial", what="partial text")
    queued = await editor.request("agent/followup", {"sessionId": sid, "content": "queued"})
    assert await editor.request("agent/cancel", {"sessionId": sid}) == {}
    await editor.wait_idle(sid, before)
    turn_end = [e for e in editor.events[sid] if e["type"] == "turn/end"][-1]
    assert turn_end["data"]["reason"]["kind"] == "aborted"
    discarded = [p["message"]["id"] for p in editor.of("agent/inbox/discarded") if p["sessionId"] == sid]
    assert discarded == [queued["messageId"]]  # keepInbox false: the queued message is dropped


async def test_cancel_keep_inbox_and_inbox_remove(editor: EditorUnderTest):
    editor.use_script([{"hang": "x"}])
    before = len(editor.statuses)
    ref = await editor.request("agent/followup", {"content": "first"})
    sid = ref["sessionId"]
    await editor.wait_for(lambda: editor.streamed_text(sid) == "x", what="hang text")
    second = await editor.request("agent/followup", {"sessionId": sid, "content": "second"})
    third = await editor.request("agent/followup", {"sessionId": sid, "content": "third"})
    assert await editor.request("agent/inbox/remove", {"sessionId": sid, "messageId": second["messageId"]}) == {"removed": True}
    assert await editor.request("agent/inbox/remove", {"sessionId": sid, "messageId": second["messageId"]}) == {"removed": False}
    await editor.request("agent/cancel", {"sessionId": sid, "keepInbox": True})
    await editor.wait_idle(sid, before)
    loaded = await editor.request("agent/session/load", {"sessionId": sid})
    assert [m["id"] for m in loaded["inbox"]["nextTurn"]] == [third["messageId"]]


async def test_invalid_params_are_readable_and_the_server_keeps_working(editor: EditorUnderTest):
    with pytest.raises(JsonRpcInvalidParams) as info:
        await editor.request("agent/followup", {"content": 42})
    assert "content" in info.value.message
    with pytest.raises(JsonRpcInvalidParams) as info:
        await editor.request("agent/steer", {"content": "no session id"})
    assert "sessionId" in info.value.message
    with pytest.raises(JsonRpcInvalidParams) as info:
        await editor.request("agent/cancel", {"sessionId": "s_nope"})
    assert "unknown session s_nope" in info.value.message
    with pytest.raises(JsonRpcInvalidParams):
        await editor.request("agent/followup", ["not", "an", "object"])
    with pytest.raises(JsonRpcInvalidParams):
        await editor.command("agentLsp.followup")  # no argument
    with pytest.raises(JsonRpcMethodNotFound):
        await editor.request("agent/does-not-exist", {})
    assert (await editor.request("agent/session/list", {}))["sessions"] is not None


async def test_agent_edit_goes_through_apply_edit(editor: EditorUnderTest, workspace: Path):
    editor.use_script(
        [
            {"tools": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
            {"tools": [{"name": "edit_file", "arguments": {"path": "calc.py", "edits": [{"oldText": "a - b  # bug", "newText": "a + b"}]}}]},
            {"text": "Fixed the subtraction."},
        ]
    )
    before = len(editor.statuses)
    edits_before = len(editor.applied_edits)
    ref = await editor.request("agent/followup", {"content": "fix calc.py"})
    sid = ref["sessionId"]
    await editor.wait_idle(sid, before)
    assert (workspace / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n"
    (edit,) = editor.applied_edits[edits_before:]
    (change,) = edit.edit.document_changes
    assert change.text_document.uri == (workspace / "calc.py").resolve().as_uri()
    results = [e for e in editor.events[sid] if e["type"] == "tool/result"]
    assert len(results) == 2 and not any(r["data"]["message"]["isError"] for r in results)

    reverted = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
    assert reverted["reverted"] == [str((workspace / "calc.py").resolve())] and reverted["skipped"] == []
    assert (workspace / "calc.py").read_text(encoding="utf-8") == BUGGY


async def test_tools_see_the_unsaved_buffer(editor: EditorUnderTest, workspace: Path):
    uri = (workspace / "calc.py").resolve().as_uri()
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text="UNSAVED = 1\n")
        )
    )
    editor.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(0, 0), end=types.Position(0, 7)), text="BUFFER"
                )
            ],
        )
    )
    editor.use_script([{"tools": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}, {"text": "ok"}])
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "read it"}))["sessionId"]
    await editor.wait_idle(sid, before)
    (result,) = [e for e in editor.events[sid] if e["type"] == "tool/result"]
    assert "BUFFER = 1" in str(result["data"]) and "return a - b" not in str(result["data"])
    editor.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def test_execute_command_runs_a_turn_and_shows_the_answer_in_the_transcript_only(editor: EditorUnderTest):
    # This client renders events: the answer is in its transcript, and no
    # window/showMessage repeats it (editors without a plugin get one: tests/editors).
    editor.use_script([{"text": "Answer from the agent."}])
    before = len(editor.statuses)
    shown_before = len(editor.client.messages)
    ref = await editor.command("agentLsp.followup", "what is this project?")
    sid = ref["sessionId"]
    await editor.wait_idle(sid, before)
    await editor.wait_for(lambda: "Answer from the agent." in editor.streamed_text(sid), what="the answer in the events")
    assert not any("Answer from the agent." in m.message for m in editor.client.messages[shown_before:])
    # a command without sessionId reuses the workspace's current session
    again = await editor.command("agentLsp.followup", {"content": "and again"})
    assert again["sessionId"] == sid
    await editor.command("agentLsp.cancel")
    fresh = await editor.command("agentLsp.newSession")
    assert fresh["sessionId"] != sid


async def test_steer_and_cancel_commands_reach_the_current_session(editor: EditorUnderTest):
    """Editors without a plugin steer and cancel with workspace/executeCommand alone."""
    editor.use_script([{"text": "slow answer", "chunkDelayMs": 50}, {"hang": "waiting"}])
    before = len(editor.statuses)
    sid = (await editor.command("agentLsp.followup", "start"))["sessionId"]
    await editor.wait_for(lambda: "assistant/chunk" in editor.event_types(sid), what="first chunk")
    steered = await editor.command("agentLsp.steer", "use tabs")  # no sessionId: the current session
    assert steered["sessionId"] == sid
    await editor.wait_for(lambda: editor.event_types(sid).count("user/message") == 2, what="the steer entering")
    assert editor.event_types(sid).count("turn/start") == 1  # same turn, next step (which hangs)
    await editor.command("agentLsp.cancel")
    await editor.wait_idle(sid, before)
    assert [e for e in editor.events[sid] if e["type"] == "turn/end"][-1]["data"]["reason"]["kind"] == "aborted"


async def test_work_done_progress_while_running(editor: EditorUnderTest):
    editor.use_script([{"text": "progress", "chunkDelayMs": 60}])
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "go"}))["sessionId"]
    await editor.wait_idle(sid, before)
    token = await editor.wait_for(
        lambda: next((t for t in editor.client.progress_reports if sid in str(t)), None), what="progress token"
    )
    reports = editor.client.progress_reports[token]
    await editor.wait_for(lambda: reports and type(reports[-1]).__name__ == "WorkDoneProgressEnd", what="progress end")
    assert type(reports[0]).__name__ == "WorkDoneProgressBegin" and reports[0].cancellable


async def test_cancelling_the_progress_cancels_the_turn(editor: EditorUnderTest):
    editor.use_script([{"hang": "waiting"}])
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "hang"}))["sessionId"]
    token = await editor.wait_for(
        lambda: next((t for t, r in editor.client.progress_reports.items() if sid in str(t) and r), None),
        what="progress begin",
    )
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    await editor.wait_idle(sid, before)
    assert [e for e in editor.events[sid] if e["type"] == "turn/end"][-1]["data"]["reason"]["kind"] == "aborted"


async def test_code_actions_on_a_diagnostic_and_a_selection(editor: EditorUnderTest, workspace: Path):
    uri = (workspace / "calc.py").resolve().as_uri()
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=BUGGY))
    )
    diagnostic = {"range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 16}}, "message": "subtraction in add()"}
    actions = await editor.raw_request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 5}},
            "context": {"diagnostics": [diagnostic]},
        },
    )
    assert [a["title"] for a in actions] == ["Fix with agent: subtraction in add()", "Ask agent about selection"]
    assert [a["kind"] for a in actions] == ["quickfix", "refactor"]
    assert actions[0]["diagnostics"][0]["message"] == "subtraction in add()"
    fix, ask = actions[0]["command"], actions[1]["command"]
    assert fix["command"] == "agentLsp.followup"
    (argument,) = fix["arguments"]
    assert argument["context"][0]["kind"] == "diagnostic" and "return a - b" in argument["context"][0]["text"]
    assert ask["arguments"][0]["context"][0]["text"] == "def add(a, b):\n    r"

    editor.use_script([{"text": "fixing"}])
    before = len(editor.statuses)
    ref = await editor.command(fix["command"], *fix["arguments"])
    await editor.wait_idle(ref["sessionId"], before)
    (message,) = [e for e in editor.events[ref["sessionId"]]
                  if e["type"] == "user/message" and e["data"]["message"]["source"] == "user"][-1:]
    assert "subtraction in add()" in str(message["data"])
    editor.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="writes to the server's fd 1 through /proc")
async def test_output_to_the_servers_stdout_does_not_break_the_stream(editor: EditorUnderTest):
    # The command writes straight into the server process' fd 1 (its parent's).
    editor.use_script(
        [
            {"tools": [{"name": "run_command", "arguments": {"command": "printf 'garbage without newline' > /proc/$PPID/fd/1; echo done"}}]},
            {"text": "still fine"},
        ]
    )
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "pollute"}))["sessionId"]
    await editor.wait_idle(sid, before)
    assert editor.streamed_text(sid) == "still fine"
    asked = [r for r in editor.permission_requests if r.get("sessionId") == sid]
    assert asked and asked[0]["kind"] == "command" and "garbage" in asked[0]["command"]
    assert (await editor.request("agent/session/list", {}))["sessions"]


async def test_edit_of_an_open_buffer_is_versioned_utf16_and_saved(editor: EditorUnderTest, workspace: Path):
    path = workspace / "emoji.py"
    text = "s = '\U0001F600'; x = 1\n"
    path.write_text(text, encoding="utf-8")
    uri = path.resolve().as_uri()
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=7, text=text))
    )
    editor.use_script(
        [
            {"tools": [{"name": "edit_file", "arguments": {"path": "emoji.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}}]},
            {"text": "done"},
        ]
    )
    before, edits_before, saved_before = len(editor.statuses), len(editor.applied_edits), len(editor.saved)
    sid = (await editor.request("agent/followup", {"content": "bump x"}))["sessionId"]
    await editor.wait_idle(sid, before)
    (edit,) = editor.applied_edits[edits_before:]
    (change,) = edit.edit.document_changes
    assert change.text_document.version == 7
    (text_edit,) = change.edits
    # the emoji is 2 UTF-16 code units: "s = '" (5) + 2 + "'; " (3) = 10
    assert (text_edit.range.start.line, text_edit.range.start.character) == (0, 10)
    assert path.read_text(encoding="utf-8") == "s = '\U0001F600'; x = 2\n"
    assert [uri] in editor.saved[saved_before:]
    editor.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


async def test_compact_an_idle_session(editor: EditorUnderTest):
    editor.use_script([{"text": "short"}])
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
    await editor.wait_idle(sid, before)
    result = await editor.request("agent/session/compact", {"sessionId": sid})
    assert isinstance(result["compacted"], bool)
    with pytest.raises(JsonRpcInvalidParams):
        await editor.request("agent/session/compact", {"sessionId": "s_missing"})


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
async def test_edits_name_an_open_document_by_the_editors_own_uri(editor: EditorUnderTest, workspace: Path, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(workspace, target_is_directory=True)
    path = workspace / "linked.py"
    path.write_text("value = 1\n", encoding="utf-8")
    uri = (link / "linked.py").as_uri()  # the editor opened it through the symlink
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=3, text="value = 1\n"))
    )
    editor.use_script(
        [
            {"tools": [{"name": "edit_file", "arguments": {"path": "linked.py", "edits": [{"oldText": "value = 1", "newText": "value = 2"}]}}]},
            {"text": "done"},
        ]
    )
    before, edits_before = len(editor.statuses), len(editor.applied_edits)
    sid = (await editor.request("agent/followup", {"content": "bump"}))["sessionId"]
    await editor.wait_idle(sid, before)
    (edit,) = editor.applied_edits[edits_before:]
    (change,) = edit.edit.document_changes
    assert (change.text_document.uri, change.text_document.version) == (uri, 3)
    assert path.read_text(encoding="utf-8") == "value = 2\n"
    editor.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
