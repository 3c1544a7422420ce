"""Every built-in tool through the real server, driven by the scripted model.

One server for the module; its client is an editor with buffers that answers
permission questions "once" unless a test says otherwise. Each test uses its
own files.
"""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest
import pytest_asyncio
from lsprotocol import types

from tools_harness import (
    BufferEditor,
    NEVER,
    call,
    error_code,
    is_error,
    run_turn,
    text_of,
    tool_server,
    wait_until,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

GRACE_S = 10.0  # the cancel grace: a turn that ends well before it did not wait for it


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("tools")
    workspace, outside = base / "ws", base / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return workspace.resolve(), outside.resolve()


@pytest.fixture(scope="module")
def workspace(places) -> Path:
    return places[0]


@pytest.fixture(scope="module")
def outside(places) -> Path:
    return places[1]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(places, tmp_path_factory):
    workspace, outside = places
    async with tool_server(
        folders=[workspace],
        sessions_dir=tmp_path_factory.mktemp("sessions"),
        settings={"cancelGraceSeconds": GRACE_S},
    ) as editor:
        yield editor


@pytest.fixture(autouse=True)
def fresh_editor_state(editor: BufferEditor):
    editor.permission_answer = "once"
    editor.before_apply = None
    editor.hold_edits = None
    editor.apply_edits = True
    yield
    for path in list(editor.buffers):
        editor.close(path)


# ------------------------------------------------------------------ reads


async def test_read_file_happy_path_and_errors(editor: BufferEditor, workspace: Path):
    (workspace / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)), encoding="utf-8")
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (workspace / "folder").mkdir()
    (workspace / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    _, results = await run_turn(
        editor,
        [
            {
                "tools": [
                    {"name": "read_file", "arguments": {"path": "notes.txt", "startLine": 2, "endLine": 3}},
                    {"name": "read_file", "arguments": {"path": "missing.txt"}},
                    {"name": "read_file", "arguments": {"path": "blob.bin"}},
                    {"name": "read_file", "arguments": {"path": "folder"}},
                    {"name": "read_file", "arguments": {"path": "latin1.txt"}},
                ]
            },
            {"text": "done"},
        ],
    )
    ranged, missing, binary, folder, latin1 = results
    assert not is_error(ranged) and "line 2" in text_of(ranged) and "line 3" in text_of(ranged)
    assert "line 4\n" not in text_of(ranged) and "line 1\n" not in text_of(ranged)
    assert error_code(missing) == "NOT_FOUND" and "missing.txt" in text_of(missing)
    assert error_code(binary) == "BINARY_FILE"
    assert error_code(folder) == "IS_DIRECTORY" and "list_dir" in text_of(folder)
    assert not is_error(latin1) and "caf\ufffd" in text_of(latin1) and "UTF-8" in text_of(latin1)


async def test_list_glob_and_grep_respect_gitignore_and_see_open_buffers(editor: BufferEditor, workspace: Path):
    root = workspace / "search"
    (root / "src").mkdir(parents=True)
    (root / "build").mkdir()
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    (root / "src" / "a.py").write_text("x = 1\nneedle_a = 2\n", encoding="utf-8")
    (root / "src" / "b.py").write_text("nothing here\n", encoding="utf-8")
    (root / "build" / "out.py").write_text("needle_built = 3\n", encoding="utf-8")
    editor.open(root / "src" / "b.py", "needle_unsaved = 4\n")  # the user's unsaved text
    _, results = await run_turn(
        editor,
        [
            {
                "tools": [
                    {"name": "list_dir", "arguments": {"path": "search"}},
                    {"name": "glob", "arguments": {"pattern": "**/*.py", "path": "search"}},
                    {"name": "grep", "arguments": {"pattern": "needle_\\w+", "path": "search"}},
                    {"name": "grep", "arguments": {"pattern": "(unclosed", "path": "search"}},
                    {"name": "list_dir", "arguments": {"path": "search/nope"}},
                ]
            },
            {"text": "done"},
        ],
    )
    listing, globbed, grepped, bad_regex, missing = results
    assert "src" in text_of(listing) and "build" not in text_of(listing)
    assert "search/src/a.py" in text_of(globbed) and "out.py" not in text_of(globbed)
    found = text_of(grepped)
    assert "needle_a" in found and "needle_unsaved" in found and "needle_built" not in found
    assert error_code(bad_regex) == "BAD_PATTERN"
    assert error_code(missing) == "NOT_FOUND"


# ------------------------------------------------------------------ edits


async def test_edit_file_on_disk_and_its_errors(editor: BufferEditor, workspace: Path):
    path = workspace / "calc.py"
    path.write_text("def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return a - b\n", encoding="utf-8")
    edits_before = len(editor.applied_edits)
    _, results = await run_turn(
        editor,
        [
            call("edit_file", path="calc.py", edits=[{"oldText": "return a - b", "newText": "return a + b"}]),
            call("edit_file", path="calc.py", edits=[{"oldText": "return a * b", "newText": "x"}]),
            call("edit_file", path="calc.py", edits=[{"oldText": "def add(a, b):\n    return a - b", "newText": "def add(a, b):\n    return a + b"}]),
            {"text": "done"},
        ],
    )
    ambiguous, missing, applied = results
    assert error_code(ambiguous) == "EDIT_NOT_APPLICABLE" and "2 times" in text_of(ambiguous) and "lines 2, 5" in text_of(ambiguous)
    assert error_code(missing) == "EDIT_NOT_APPLICABLE" and "not found" in text_of(missing)
    assert not is_error(applied) and "(+1 -1 lines)" in text_of(applied)
    assert path.read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"
    (edit,) = editor.applied_edits[edits_before:]  # errors send nothing
    assert edit.label == "agent: edit calc.py"
    (change,) = edit.edit.document_changes
    assert change.text_document.version is None  # not open: no version
    assert applied["meta"]["diff"].startswith("--- a/calc.py")


async def test_edit_of_an_open_buffer_carries_its_version_and_lands_in_the_buffer(editor: BufferEditor, workspace: Path):
    path = workspace / "open.py"
    path.write_text("value = 1\n", encoding="utf-8")
    editor.open(path)
    editor.type(path, "value = 1\nunsaved = True\n")  # version 2, not on disk
    edits_before = len(editor.applied_edits)
    _, results = await run_turn(
        editor, [call("edit_file", path="open.py", edits=[{"oldText": "value = 1", "newText": "value = 2"}]), {"text": "ok"}]
    )
    assert not is_error(results[0])
    (edit,) = editor.applied_edits[edits_before:]
    assert edit.edit.document_changes[0].text_document.version == 2
    assert editor.text(path) == "value = 2\nunsaved = True\n"  # the user's unsaved line is kept
    assert path.read_text(encoding="utf-8") == editor.text(path)  # saved: what runs next sees it
    assert editor.saved and editor.saved[-1] == [path.as_uri()]


async def test_edit_conflict_returns_the_fresh_text_and_loses_nothing(editor: BufferEditor, workspace: Path):
    path = workspace / "conflict.py"
    path.write_text("a = 1\nb = 2\n", encoding="utf-8")
    editor.open(path)

    def user_types_first(params: types.ApplyWorkspaceEditParams) -> None:
        # the user types between the agent's read and its edit landing
        editor.before_apply = None
        editor.type(path, editor.text(path) + "typed_by_user = 3\n")

    editor.before_apply = user_types_first
    _, results = await run_turn(
        editor,
        [
            call("read_file", path="conflict.py"),
            call("edit_file", path="conflict.py", edits=[{"oldText": "a = 1", "newText": "a = 10"}]),
            # the model edits again against the fresh text it was given
            call("edit_file", path="conflict.py", edits=[{"oldText": "a = 1\n", "newText": "a = 10\n"}]),
            {"text": "done"},
        ],
    )
    _, rejected, retried = results
    assert error_code(rejected) == "EDIT_REJECTED"
    message = text_of(rejected)
    assert "changed meanwhile" in message and "typed_by_user = 3" in message  # the fresh text
    assert not is_error(retried)
    assert editor.text(path) == "a = 10\nb = 2\ntyped_by_user = 3\n"  # both sides' text


async def test_edit_refused_by_the_editor_is_an_error_the_model_sees(editor: BufferEditor, workspace: Path):
    path = workspace / "refused.py"
    path.write_text("x = 1\n", encoding="utf-8")
    editor.apply_edits = False
    _, results = await run_turn(editor, [call("edit_file", path="refused.py", edits=[{"oldText": "x = 1", "newText": "x = 2"}]), {"text": "ok"}])
    assert error_code(results[0]) == "EDIT_REJECTED" and "rejected by the test" in text_of(results[0])
    assert "x = 1" in text_of(results[0]) and path.read_text(encoding="utf-8") == "x = 1\n"


async def test_file_tools_use_resource_operations(editor: BufferEditor, workspace: Path):
    (workspace / "old_name.py").write_text("name = 'old'\n", encoding="utf-8")
    (workspace / "doomed.py").write_text("gone = True\n", encoding="utf-8")
    (workspace / "whole.txt").write_text("first\n", encoding="utf-8")
    edits_before = len(editor.applied_edits)
    _, results = await run_turn(
        editor,
        [
            call("create_file", path="pkg/new.py", content="created = True\n"),
            call("create_file", path="pkg/new.py", content="again\n"),
            call("rename_file", path="old_name.py", newPath="pkg/renamed.py"),
            call("delete_file", path="doomed.py"),
            call("delete_file", path="doomed.py"),
            call("write_file", path="whole.txt", content="second\n"),
            {"text": "done"},
        ],
    )
    created, exists, renamed, deleted, gone, written = results
    assert not is_error(created) and (workspace / "pkg" / "new.py").read_text(encoding="utf-8") == "created = True\n"
    assert error_code(exists) == "ALREADY_EXISTS"
    assert not is_error(renamed) and (workspace / "pkg" / "renamed.py").exists() and not (workspace / "old_name.py").exists()
    assert not is_error(deleted) and not (workspace / "doomed.py").exists()
    assert error_code(gone) == "NOT_FOUND"
    assert not is_error(written) and (workspace / "whole.txt").read_text(encoding="utf-8") == "second\n"
    operations = [type(c).__name__ for e in editor.applied_edits[edits_before:] for c in e.edit.document_changes]
    assert operations[:1] == ["CreateFile"] and "RenameFile" in operations and "DeleteFile" in operations


# --------------------------------------------------- edits visible to commands


async def test_a_command_run_after_an_edit_of_an_open_buffer_sees_the_edit(editor: BufferEditor, workspace: Path):
    path = workspace / "seen.py"
    path.write_text("answer = 41\n", encoding="utf-8")
    editor.open(path)
    _, results = await run_turn(
        editor,
        [
            call("edit_file", path="seen.py", edits=[{"oldText": "answer = 41", "newText": "answer = 42"}]),
            call("run_command", command="cat seen.py"),
            {"text": "done"},
        ],
    )
    edited, ran = results
    assert not is_error(edited) and not is_error(ran)
    assert "answer = 42" in text_of(ran) and "[exit code 0]" in text_of(ran)


# ------------------------------------------------------------------ shell


async def test_run_command_streams_output_and_reports_the_exit_code(editor: BufferEditor, workspace: Path):
    progress_before = len(editor.of("agent/tool/progress"))
    _, results = await run_turn(
        editor,
        [
            call("run_command", command="echo out; echo err >&2; exit 3"),
            call("run_command", command="sleep 5", timeoutSeconds=0.3),
            call("run_command", command="pwd", cwd="../outside"),
            {"text": "done"},
        ],
    )
    ran, timed_out, escaped = results
    assert not is_error(ran) and "out" in text_of(ran) and "err" in text_of(ran) and "[exit code 3]" in text_of(ran)
    assert ran["meta"]["exitCode"] == 3
    streamed = "".join(p["data"].get("text", "") for p in editor.of("agent/tool/progress")[progress_before:])
    assert "out" in streamed and "err" in streamed
    assert error_code(timed_out) == "TIMEOUT"
    assert error_code(escaped) == "OUTSIDE_WORKSPACE"


async def test_cancelling_a_command_over_the_wire_leaves_no_process(editor: BufferEditor, workspace: Path):
    pids = workspace / "pids.txt"
    editor.use_script(
        [call("run_command", command=f"echo $$ > {pids}; sleep 30.25 & echo $! >> {pids}; sleep 31.25"), {"text": "unreached"}]
    )
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "run it"}))["sessionId"]
    await wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2, what="the command to start")
    started = time.monotonic()
    await editor.request("agent/cancel", {"sessionId": sid})
    await editor.wait_idle(sid, before)
    assert time.monotonic() - started < GRACE_S / 2
    (result,) = [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]
    assert error_code(result) == "ABORTED"
    # by command line, not by the pids the command saw: in the sandbox those are its own
    assert not _running("sleep", "30.25") and not _running("sleep", "31.25"), "a process survived the cancel"


def _running(*argv: str) -> list[int]:
    """Pids of the live (not zombie) processes with exactly this command line."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["cmdline"] == list(argv) and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process.pid)
    return found


# ------------------------------------------------------------- confinement


async def test_every_escape_from_the_workspace_is_refused(editor: BufferEditor, workspace: Path, outside: Path):
    (workspace / "link_out").symlink_to(outside / "secret.txt")
    (workspace / "dir_out").symlink_to(outside, target_is_directory=True)
    escapes = ["../outside/secret.txt", str(outside / "secret.txt"), "link_out", "dir_out/secret.txt", (outside / "secret.txt").as_uri()]
    steps = []
    for target in escapes:
        steps.append(call("read_file", path=target))
        steps.append(call("edit_file", path=target, edits=[{"oldText": "top secret", "newText": "leaked"}]))
        steps.append(call("write_file", path=target, content="overwritten\n"))
    steps.append(call("grep", pattern="secret", path="../outside"))
    steps.append(call("list_dir", path=str(outside)))
    steps.append(call("rename_file", path="notes.txt", newPath="../outside/stolen.txt"))
    steps.append(call("delete_file", path="link_out"))
    _, results = await run_turn(editor, [*steps, {"text": "done"}])
    assert len(results) == len(steps)
    for step, result in zip(steps, results):
        assert error_code(result) == "OUTSIDE_WORKSPACE", (step, text_of(result))
        assert "top secret" not in text_of(result)
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


# ------------------------------------------------------------------ revert


async def test_revert_keeps_a_later_user_edit_and_reports_it(editor: BufferEditor, workspace: Path):
    path = workspace / "revert_me.txt"
    original = "".join(f"line {i}\n" for i in range(1, 21))
    path.write_text(original, encoding="utf-8")
    editor.open(path)
    sid, results = await run_turn(
        editor,
        [
            call("edit_file", path="revert_me.txt", edits=[
                {"oldText": "line 3\n", "newText": "agent 3\n"}, {"oldText": "line 15\n", "newText": "agent 15\n"},
            ]),
            {"text": "edited"},
        ],
    )
    assert not is_error(results[0])
    # the user then edits one of the agent's lines and adds a line at the top
    editor.type(path, "user header\n" + editor.text(path).replace("agent 15\n", "user 15\n"))
    report = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
    assert report["reverted"] == [str(path)]
    assert report["skipped"] == [{"path": str(path), "reason": "1 of 2 changes were edited since; left as they are"}]
    assert editor.text(path) == "user header\n" + original.replace("line 15\n", "user 15\n")
    assert path.read_text(encoding="utf-8") == editor.text(path)
    # the open session's client is told, with a durable event
    revert = await wait_until(lambda: [e for e in editor.events[sid] if e["type"] == "turn/revert"], what="turn/revert")
    assert revert[0]["data"] == {"turn": 1, **report}
    # asked again: nothing happens, and the answer says why
    edits_before = len(editor.applied_edits)
    again = await editor.request("agent/turn/revert", {"sessionId": sid, "turn": 1})
    assert again["reverted"] == [] and [s["path"] for s in again["skipped"]] == [str(path)]
    assert again["skipped"][0]["reason"].startswith("turn 1 was already reverted at ")
    assert len(editor.applied_edits) == edits_before


# ---------------------------------------------------- permissions and cancel


async def test_a_denied_command_does_not_run(editor: BufferEditor, workspace: Path):
    marker = workspace / "ran.txt"
    editor.permission_answer = "deny"
    asked_before = len(editor.permission_requests)
    _, results = await run_turn(editor, [call("run_command", command=f"touch {marker.name}"), {"text": "ok"}])
    assert error_code(results[0]) == "PERMISSION_DENIED" and "denied" in text_of(results[0])
    assert not marker.exists()
    (asked,) = editor.permission_requests[asked_before:]
    assert asked["tool"] == "run_command" and asked["kind"] == "command" and asked["command"] == f"touch {marker.name}"


async def test_cancel_while_the_editor_holds_an_edit_ends_the_turn_at_once(editor: BufferEditor, workspace: Path):
    import asyncio

    path = workspace / "held.py"
    path.write_text("held = 1\n", encoding="utf-8")
    editor.hold_edits = asyncio.Event()
    edits_before = len(editor.applied_edits)
    editor.use_script([call("edit_file", path="held.py", edits=[{"oldText": "held = 1", "newText": "held = 2"}]), {"text": "unreached"}])
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "edit"}))["sessionId"]
    await wait_until(lambda: len(editor.applied_edits) > edits_before, what="the edit to reach the editor")
    started = time.monotonic()
    await editor.request("agent/cancel", {"sessionId": sid})
    await editor.wait_idle(sid, before)
    assert time.monotonic() - started < GRACE_S / 2
    (result,) = [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]
    assert error_code(result) == "ABORTED" and "may still apply" in text_of(result)
    editor.hold_edits.set()  # the late answer is dropped without harm
    await wait_until(lambda: path.read_text(encoding="utf-8") == "held = 2\n", what="the late edit")


async def test_cancel_while_a_permission_question_is_open_ends_the_turn_at_once(editor: BufferEditor, workspace: Path):
    editor.permission_answer = NEVER
    editor.use_script([call("run_command", command="echo never"), {"text": "unreached"}])
    before = len(editor.statuses)
    asked_before = len(editor.permission_requests)
    sid = (await editor.request("agent/followup", {"content": "run"}))["sessionId"]
    await wait_until(lambda: len(editor.permission_requests) > asked_before, what="the question")
    started = time.monotonic()
    await editor.request("agent/cancel", {"sessionId": sid})
    await editor.wait_idle(sid, before)
    assert time.monotonic() - started < GRACE_S / 2
    (result,) = [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]
    assert error_code(result) == "ABORTED" and "waiting for permission" in text_of(result)


async def test_the_file_and_shell_tools_errors(editor: BufferEditor, workspace: Path):
    (workspace / "errors").mkdir()
    (workspace / "errors" / "a.txt").write_text("a\n", encoding="utf-8")
    (workspace / "errors" / "b.txt").write_text("b\n", encoding="utf-8")
    _, results = await run_turn(
        editor,
        [
            call("write_file", path="errors", content="x"),
            call("rename_file", path="errors/a.txt", newPath="errors/b.txt"),
            call("rename_file", path="errors/missing.txt", newPath="errors/c.txt"),
            call("delete_file", path="errors"),
            call("glob", pattern="*.txt", path="errors/a.txt"),
            call("run_command", command="ls", cwd="errors/a.txt"),
            call("run_command", command="   "),
            {"text": "done"},
        ],
    )
    codes = [error_code(r) for r in results]
    assert codes == ["IS_DIRECTORY", "ALREADY_EXISTS", "NOT_FOUND", "IS_DIRECTORY", "NOT_A_DIRECTORY", "NOT_A_DIRECTORY", "BAD_COMMAND"]
    assert (workspace / "errors" / "a.txt").read_text(encoding="utf-8") == "a\n"
    assert (workspace / "errors" / "b.txt").read_text(encoding="utf-8") == "b\n"
