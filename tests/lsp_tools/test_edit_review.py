"""Reviewing the agent's edits, through the real server and an editor with buffers.

- "edits.review": "review": an edit lands in the buffer unsaved; each hunk is
  listed (agent/review/list), offered as a code action, kept or undone; undo
  restores the buffer text with a versioned edit, the next model request says
  the user rejected the change, and the log records both steps; the file is
  saved once no hunk of it is pending.
- "ask": each edit waits for the user's approval of its diff; deny is a tool
  error the model sees and nothing changes.
- a plain LSP editor (no agentLsp extensions) keeps and undoes with code actions.
- the setting changes while an edit is on its way: the edit follows the mode it
  was sent with (saved, or pending and unsaved: never both); an undo is never
  saved by the editor while another hunk of its file is pending.
- the server is killed with hunks pending: the next server lists them again once
  the editor opens the unsaved buffer, keeps and undoes them; a hunk whose lines
  the user changed meanwhile is not listed and not touched.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import psutil
import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tools_harness import BufferEditor, call, error_code, review_of, run_turn, text_of, tool_server

pytestmark = pytest.mark.asyncio

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
TWO_EDITS = call("edit_file", path="app.py", edits=[
    {"oldText": "line 2\n", "newText": "LINE TWO\n"},
    {"oldText": "line 15\n", "newText": "LINE FIFTEEN\nline 15b\n"},
])


async def code_actions(editor: BufferEditor, path: Path, line: int) -> list[dict]:
    """The code actions at the start of `line`, as plain JSON."""
    at = {"line": line, "character": 0}
    return await editor.raw_request("textDocument/codeAction", {
        "textDocument": {"uri": path.as_uri()}, "range": {"start": at, "end": at}, "context": {"diagnostics": []}})


async def run_action(editor: BufferEditor, path: Path, line: int, title: str) -> dict:
    """Run the code action of that title (its command), as an editor does when the user picks it."""
    action = next(a for a in await code_actions(editor, path, line) if a["title"] == title)
    return await editor.command(action["command"]["command"], *action["command"]["arguments"])


def workspace_with_app(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace folder holding app.py with the ORIGINAL text."""
    root = tmp_path / "ws"
    root.mkdir()
    app = root / "app.py"
    app.write_text(ORIGINAL, encoding="utf-8")
    return root, app


def of_type(editor: BufferEditor, sid: str, kind: str) -> list[dict]:
    return [e["data"] for e in editor.events[sid] if e["type"] == kind]


async def test_review_mode_holds_hunks_unsaved_and_undo_is_told_to_the_model(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions",
                           settings={"edits": {"review": "review"}}) as editor:
        editor.open(app)
        sid, results = await run_turn(editor, [TWO_EDITS, {"text": "done"}], content="rename the lines")
        assert not results[0].get("error"), text_of(results[0])
        assert "waiting for the user to keep or undo it" in text_of(results[0])
        edited = editor.text(app)
        assert "LINE TWO\n" in edited and "LINE FIFTEEN\nline 15b\n" in edited
        assert app.read_text(encoding="utf-8") == ORIGINAL  # not saved
        assert editor.saved == []

        hunks = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        assert [(h["range"]["start"]["line"], h["range"]["end"]["line"], h["oldText"], h["newText"]) for h in hunks] == [
            (1, 2, "line 2\n", "LINE TWO\n"), (14, 16, "line 15\n", "LINE FIFTEEN\nline 15b\n")]
        assert {h["uri"] for h in hunks} == {app.as_uri()}

        # the user types above the hunks: they move with the text
        editor.type(app, "# header\n" + editor.text(app))
        hunks = (await editor.request("agent/review/list", {"uri": app.as_uri()}))["hunks"]
        assert [h["range"]["start"]["line"] for h in hunks] == [2, 15]

        titles = [a["title"] for a in await code_actions(editor, app, 2)]
        assert "Keep agent change" in titles and "Undo agent change" in titles
        assert "Keep all agent changes in this file" in titles
        assert "Undo agent change" not in [a["title"] for a in await code_actions(editor, app, 8)]  # no hunk there

        result = await run_action(editor, app, 2, "Undo agent change")
        assert result["resolved"] == [hunks[0]["hunkId"]] and result["skipped"] == []
        assert editor.text(app).startswith("# header\nline 1\nline 2\nline 3\n")
        assert "LINE FIFTEEN" in editor.text(app)
        assert app.read_text(encoding="utf-8") == ORIGINAL  # one hunk still pending: not saved yet
        assert editor.saved == []

        kept = await editor.request("agent/review/resolve", {"sessionId": sid, "uri": app.as_uri(), "action": "keep"})
        assert kept == {"resolved": [hunks[1]["hunkId"]], "skipped": []}
        await editor.wait_for(lambda: editor.saved, what="the save after the last hunk")
        assert app.read_text(encoding="utf-8") == editor.text(app)
        assert (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"] == []

        # the next request tells the model what the user rejected
        await run_turn(editor, [{"text": "understood"}], content="next", session_id=sid)
        told = [m["message"] for m in of_type(editor, sid, "user/message") if m["message"].get("source") == "review"]
        assert len(told) == 1 and told[0]["content"][0]["text"].startswith("The user rejected this change")
        assert "-line 2\n+LINE TWO\n" in told[0]["content"][0]["text"]
        # what clients show instead of that text
        assert told[0]["note"]["kind"] == "undo" and told[0]["note"]["text"].startswith("↶ you undid a change in ")
        assert told[0]["note"]["text"].endswith(app.name)

        loaded = (await editor.request("agent/session/load", {"sessionId": sid}))["events"]
        pending = [e["data"] for e in loaded if e["type"] == "review/pending"]
        resolved = [(e["data"]["action"], [h["hunkId"] for h in e["data"]["hunks"]]) for e in loaded if e["type"] == "review/resolve"]
        assert [len(p["hunks"]) for p in pending] == [2]
        assert resolved == [("undo", [hunks[0]["hunkId"]]), ("keep", [hunks[1]["hunkId"]])]

        with pytest.raises(JsonRpcInvalidParams, match="no pending change"):
            await editor.request("agent/review/resolve", {"sessionId": sid, "hunkId": "nope.1", "action": "undo"})
        with pytest.raises(JsonRpcInvalidParams, match="hunkId"):
            await editor.request("agent/review/resolve", {"sessionId": sid, "action": "undo"})


async def test_undo_of_a_hunk_the_user_changed_meanwhile_is_refused_and_nothing_is_lost(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions",
                           settings={"edits": {"review": "review"}}) as editor:
        editor.open(app)
        sid, _ = await run_turn(editor, [TWO_EDITS, {"text": "done"}])
        first = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"][0]
        # the user rewrites the agent's line: that hunk is theirs now
        editor.type(app, editor.text(app).replace("LINE TWO\n", "my own line two\n"))
        hunks = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        assert [h["newText"] for h in hunks] == ["LINE FIFTEEN\nline 15b\n"]
        with pytest.raises(JsonRpcInvalidParams, match="no pending change"):
            await editor.request("agent/review/resolve", {"sessionId": sid, "hunkId": first["hunkId"], "action": "undo"})
        # an undo whose buffer changed while it was sent is refused by the version check
        editor.before_apply = lambda params: editor.type(app, editor.text(app) + "typed\n")
        result = await editor.request("agent/review/resolve", {"sessionId": sid, "all": True, "action": "undo"})
        assert result["resolved"] == [] and "refused" in result["skipped"][0]["reason"]
        assert "my own line two\n" in editor.text(app) and editor.text(app).endswith("typed\n")


async def test_ask_mode_waits_for_approval_of_the_diff(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions",
                           settings={"edits": {"review": "ask"}}) as editor:
        editor.open(app)
        editor.permission_answer = "deny"
        sid, results = await run_turn(editor, [TWO_EDITS, {"text": "ok"}])
        asked = editor.permission_requests[-1]
        assert asked["choices"] == ["once", "deny"] and "-line 2\n+LINE TWO\n" in asked["diff"]
        assert error_code(results[0]) == "PERMISSION_DENIED"
        assert "The user rejected this edit" in text_of(results[0]) and "+LINE TWO" in text_of(results[0])
        assert editor.text(app) == ORIGINAL and editor.applied_edits == []

        editor.permission_answer = "once"
        _, results = await run_turn(editor, [TWO_EDITS, {"text": "applied"}], session_id=sid)  # a new script
        assert not results[0].get("error")
        assert "LINE TWO" in editor.text(app)
        await editor.wait_for(lambda: editor.saved, what="the save")
        assert app.read_text(encoding="utf-8") == editor.text(app)


async def test_a_plain_lsp_editor_keeps_and_undoes_with_code_actions(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    # no agentLsp extensions but events (how the test follows the turn): the server saves by itself
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions", agent={"events": True},
                           settings={"edits": {"review": "review"}}) as editor:
        editor.open(app)
        await run_turn(editor, [TWO_EDITS, {"text": "done"}])
        assert app.read_text(encoding="utf-8") == ORIGINAL  # the server did not write the edited buffer
        await run_action(editor, app, 1, "Keep agent change")
        await run_action(editor, app, 14, "Undo agent change")
        expected = ORIGINAL.replace("line 2\n", "LINE TWO\n")
        assert editor.text(app) == expected
        await editor.wait_for(lambda: app.read_text(encoding="utf-8") == expected, what="the server's save")
        assert [a["title"] for a in await code_actions(editor, app, 1)] == ["Fix with agent"]


async def switch_review(editor: BufferEditor, script: list, mode: str) -> None:
    """The user changes "edits.review" (the model's script stays), and the server has applied it."""
    editor.configure({"model": {"provider": "scripted", "script": script}, "edits": {"review": mode}})
    await editor.request("agent/review/list", {})  # answered once the settings are pulled and applied


EDITED = ORIGINAL.replace("line 2\n", "LINE TWO\n").replace("line 15\n", "LINE FIFTEEN\nline 15b\n")


@pytest.mark.parametrize("sent, switched", [("apply", "review"), ("review", "apply")])
async def test_an_edit_follows_the_review_mode_it_was_sent_with(tmp_path: Path, sent: str, switched: str):
    root, app = workspace_with_app(tmp_path)
    script = [TWO_EDITS, {"text": "done"}]
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions",
                           settings={"edits": {"review": sent}}) as editor:
        editor.open(app)
        editor.plugin_saves = True  # like our plugins: an edit not sent for review is saved by the editor

        async def change_the_setting(params) -> None:  # while the edit is on its way
            editor.while_applying = None
            await switch_review(editor, script, switched)

        editor.while_applying = change_the_setting
        sid, results = await run_turn(editor, script)
        assert not results[0].get("error"), text_of(results[0])
        assert [review_of(p) for p in editor.applied_edits] == [sent]
        assert editor.text(app) == EDITED
        pending = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        if sent == "apply":  # saved, and nothing waits for a keep or undo
            await editor.wait_for(lambda: editor.saved, what="the server's save")
            assert app.read_text(encoding="utf-8") == EDITED
            assert pending == []
            assert "waiting for the user" not in text_of(results[0])
        else:  # pending, and not saved by anyone
            assert app.read_text(encoding="utf-8") == ORIGINAL
            assert editor.saved == [] and editor.plugin_saved == []
            assert [h["newText"] for h in pending] == ["LINE TWO\n", "LINE FIFTEEN\nline 15b\n"]
            assert "waiting for the user to keep or undo it" in text_of(results[0])


async def test_an_undo_after_the_setting_changed_is_not_saved_while_a_hunk_is_pending(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    script = [TWO_EDITS, {"text": "done"}]
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions",
                           settings={"edits": {"review": "review"}}) as editor:
        editor.open(app)
        editor.plugin_saves = True
        sid, _ = await run_turn(editor, script)
        first, second = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        await switch_review(editor, script, "apply")  # the hunks held before still wait

        await editor.request("agent/review/resolve", {"sessionId": sid, "hunkId": first["hunkId"], "action": "undo"})
        assert review_of(editor.applied_edits[-1]) == "review"
        assert editor.text(app) == ORIGINAL.replace("line 15\n", "LINE FIFTEEN\nline 15b\n")
        assert app.read_text(encoding="utf-8") == ORIGINAL  # the second hunk is pending: not saved
        assert editor.saved == [] and editor.plugin_saved == []

        await editor.request("agent/review/resolve", {"sessionId": sid, "hunkId": second["hunkId"], "action": "keep"})
        await editor.wait_for(lambda: editor.saved, what="the save once nothing is pending")
        assert app.read_text(encoding="utf-8") == editor.text(app)


async def test_sessions_whose_hunks_share_an_id_are_resolved_apart(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("a.py", "b.py"):
        (root / name).write_text(ORIGINAL, encoding="utf-8")
    same_id = lambda path: {"tools": [{"name": "edit_file", "id": "same", "arguments": {  # noqa: E731
        "path": path, "edits": [{"oldText": "line 2\n", "newText": "LINE TWO\n"}]}}]}
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions",
                           settings={"edits": {"review": "review"}}) as editor:
        editor.open(root / "a.py")
        editor.open(root / "b.py")
        first, _ = await run_turn(editor, [same_id("a.py"), {"text": "a done"}])
        second, _ = await run_turn(editor, [same_id("b.py"), {"text": "b done"}])
        hunks = (await editor.request("agent/review/list", {}))["hunks"]
        assert sorted((h["sessionId"], h["hunkId"]) for h in hunks) == sorted([(first, "same.1"), (second, "same.1")])
        await editor.request("agent/review/resolve", {"sessionId": first, "hunkId": "same.1", "action": "keep"})
        left = (await editor.request("agent/review/list", {}))["hunks"]
        assert [(h["sessionId"], h["uri"]) for h in left] == [(second, (root / "b.py").as_uri())]


async def killed(editor: BufferEditor) -> None:
    """The server dies as in a crash (the editor keeps its buffers)."""
    server = psutil.Process(editor.server_pid)
    os.kill(editor.server_pid, signal.SIGKILL)
    await asyncio.to_thread(server.wait, 10)


async def test_pending_hunks_survive_a_server_restart(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    sessions, review = tmp_path / "sessions", {"edits": {"review": "review"}}
    async with tool_server(folders=[root], sessions_dir=sessions, settings=review, graceful=False) as editor:
        editor.open(app)
        sid, _ = await run_turn(editor, [TWO_EDITS, {"text": "done"}])
        before = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        unsaved = editor.text(app)
        await killed(editor)
    assert app.read_text(encoding="utf-8") == ORIGINAL

    async with tool_server(folders=[root], sessions_dir=sessions, settings=review) as editor:
        # listed only once the buffer is open: the text under review is not on disk
        assert (await editor.request("agent/review/list", {}))["hunks"] == []
        editor.open(app, unsaved)
        after = (await editor.request("agent/review/list", {}))["hunks"]
        assert after == before
        titles = [a["title"] for a in await code_actions(editor, app, 1)]
        assert "Undo agent change" in titles

        undone = await editor.request("agent/review/resolve", {"sessionId": sid, "hunkId": before[0]["hunkId"], "action": "undo"})
        assert undone == {"resolved": [before[0]["hunkId"]], "skipped": []}
        assert editor.text(app).startswith("line 1\nline 2\nline 3\n")
        assert app.read_text(encoding="utf-8") == ORIGINAL  # one hunk still pending
        kept = await editor.request("agent/review/resolve", {"sessionId": sid, "all": True, "action": "keep"})
        assert kept == {"resolved": [before[1]["hunkId"]], "skipped": []}
        await editor.wait_for(lambda: editor.saved, what="the save after the last hunk")
        assert app.read_text(encoding="utf-8") == ORIGINAL.replace("line 15\n", "LINE FIFTEEN\nline 15b\n")

        # the model is told about the undo at its next step, as in one server run
        await run_turn(editor, [{"text": "understood"}], content="next", session_id=sid)
        told = [m["message"] for m in of_type(editor, sid, "user/message") if m["message"].get("source") == "review"]
        assert len(told) == 1 and "-line 2\n+LINE TWO\n" in told[0]["content"][0]["text"]

    async with tool_server(folders=[root], sessions_dir=sessions, settings=review) as editor:
        editor.open(app, app.read_text(encoding="utf-8"))
        assert (await editor.request("agent/review/list", {}))["hunks"] == []  # resolved before the restart


async def test_after_a_restart_a_hunk_the_user_changed_is_not_pending(tmp_path: Path):
    root, app = workspace_with_app(tmp_path)
    sessions, review = tmp_path / "sessions", {"edits": {"review": "review"}}
    async with tool_server(folders=[root], sessions_dir=sessions, settings=review, graceful=False) as editor:
        editor.open(app)
        sid, _ = await run_turn(editor, [TWO_EDITS, {"text": "done"}])
        unsaved = editor.text(app)
        await killed(editor)

    # meanwhile the user rewrote the agent's first line and added lines on top
    changed = "# mine\n# mine too\n" + unsaved.replace("LINE TWO\n", "my line two\n")
    async with tool_server(folders=[root], sessions_dir=sessions, settings=review) as editor:
        editor.open(app, changed)
        hunks = (await editor.request("agent/review/list", {"sessionId": sid}))["hunks"]
        assert [(h["newText"], h["range"]["start"]["line"]) for h in hunks] == [("LINE FIFTEEN\nline 15b\n", 16)]
        result = await editor.request("agent/review/resolve", {"sessionId": sid, "all": True, "action": "undo"})
        assert result["resolved"] == [hunks[0]["hunkId"]]
        assert editor.text(app) == changed.replace("LINE FIFTEEN\nline 15b\n", "line 15\n")  # "my line two" kept
