"""The tools with a generic LSP editor: no agentLsp extensions, no resource operations.

- create/delete/rename fall back to the disk (documented in agent_lsp/tools/files.py);
- an edited open buffer is written to disk by the server itself (no agent/saveDocuments),
  so a command run next sees it;
- permission questions go out as window/showMessageRequest; no answer in time is "deny".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from agent_lsp.workspace.session_location import folder_key
from tools_harness import BufferEditor, NEVER, call, error_code, is_error, run_turn, text_of, tool_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT_S = 0.5  # the permission question's timeout in this server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("generic").resolve()


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("generic-sessions")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(workspace, sessions):
    async with tool_server(
        folders=[workspace],
        sessions_dir=sessions,
        resource_operations=False,
        # no agent/permission, no agent/saveDocuments; it declares only that it
        # renders events, which is how the test follows the turn
        agent={"events": True},
        env={"AGENT_LSP_PERMISSION_TIMEOUT_SECONDS": str(TIMEOUT_S)},
        settings={"permissions": {"defaults": {"write": "allow", "command": "allow"},
                                  "rules": [{"tool": "run_command", "action": "ask", "commandPrefix": "touch"}]}},
    ) as editor:
        yield editor


@pytest.fixture(autouse=True)
def fresh_editor_state(editor: BufferEditor):
    editor.message_answer = "Allow once"
    yield
    for path in list(editor.buffers):
        editor.close(path)


async def test_file_tools_fall_back_to_the_disk(editor: BufferEditor, workspace: Path):
    (workspace / "old.py").write_text("old = 1\n", encoding="utf-8")
    (workspace / "doomed.py").write_text("doomed = 1\n", encoding="utf-8")
    (workspace / "open_doomed.py").write_text("open = 1\n", encoding="utf-8")
    editor.open(workspace / "open_doomed.py")
    edits_before = len(editor.applied_edits)
    _, results = await run_turn(
        editor,
        [
            call("create_file", path="made/new.py", content="new = 1\n"),
            call("rename_file", path="old.py", newPath="made/moved.py"),
            call("delete_file", path="doomed.py"),
            call("delete_file", path="open_doomed.py"),
            {"text": "done"},
        ],
    )
    created, renamed, deleted, deleted_open = results
    assert not any(is_error(r) for r in results), [text_of(r) for r in results]
    assert (workspace / "made" / "new.py").read_text(encoding="utf-8") == "new = 1\n"
    assert (workspace / "made" / "moved.py").read_text(encoding="utf-8") == "old = 1\n" and not (workspace / "old.py").exists()
    assert not (workspace / "doomed.py").exists() and not (workspace / "open_doomed.py").exists()
    assert "still has it open" in text_of(deleted_open)
    # nothing asked the editor to create, rename or delete: it cannot
    for params in editor.applied_edits[edits_before:]:
        assert all(isinstance(c, types.TextDocumentEdit) for c in params.edit.document_changes or [])


async def test_an_edited_open_buffer_is_written_to_disk_for_the_next_command(editor: BufferEditor, workspace: Path):
    path = workspace / "buffer.py"
    path.write_text("n = 1\n", encoding="utf-8")
    editor.open(path)
    editor.type(path, "n = 1\nunsaved = 2\n")
    _, results = await run_turn(
        editor,
        [
            call("edit_file", path="buffer.py", edits=[{"oldText": "n = 1", "newText": "n = 100"}]),
            call("run_command", command="cat buffer.py"),
            {"text": "done"},
        ],
    )
    edited, ran = results
    assert not is_error(edited)
    assert "n = 100" in text_of(ran) and "unsaved = 2" in text_of(ran)
    assert path.read_text(encoding="utf-8") == editor.text(path) == "n = 100\nunsaved = 2\n"
    assert editor.saved == []  # no agent/saveDocuments to a generic editor


async def test_permission_through_show_message_request(editor: BufferEditor, workspace: Path):
    editor.message_answer = "Deny"
    asked_before = len(editor.show_message_requests)
    _, results = await run_turn(editor, [call("run_command", command="touch denied.txt"), {"text": "ok"}])
    assert error_code(results[0]) == "PERMISSION_DENIED" and not (workspace / "denied.txt").exists()
    (question,) = editor.show_message_requests[asked_before:]
    assert "touch denied.txt" in question.message
    # the ask rule of the settings pins "touch" to asking: only the answers it honours, and why
    assert [a.title for a in question.actions] == ["Deny", "Allow once"]  # the preselected first one denies
    assert '"commandPrefix": "touch"' in question.message and "asks every time" in question.message
    assert question.message.endswith("Answer: Deny / Allow once")

    editor.message_answer = "Allow once"
    _, results = await run_turn(editor, [call("run_command", command="touch allowed.txt"), {"text": "ok"}])
    assert not is_error(results[0]) and (workspace / "allowed.txt").exists()
    asked = len(editor.show_message_requests)
    editor.message_answer = "Allow once"
    await run_turn(editor, [call("run_command", command="touch allowed.txt"), {"text": "ok"}])
    assert len(editor.show_message_requests) == asked + 1


async def test_an_unanswered_permission_question_is_a_deny(editor: BufferEditor, workspace: Path, sessions: Path):
    editor.message_answer = NEVER
    _, results = await run_turn(editor, [call("run_command", command="touch unanswered.txt"), {"text": "ok"}])
    assert error_code(results[0]) == "PERMISSION_DENIED"
    assert f"Nobody answered within {TIMEOUT_S:g} s" in text_of(results[0])
    assert not (workspace / "unanswered.txt").exists()
    stored = sessions / folder_key(workspace) / "permissions.json"
    assert not stored.exists() or "unanswered" not in json.dumps(json.loads(stored.read_text()))


async def test_a_file_that_already_holds_the_edited_text_is_not_written(editor: BufferEditor, workspace: Path):
    # The agent's edit undoes the user's unsaved change: the buffer is back to
    # what is on disk, so the file is left alone (editors watching it see no change).
    import os

    path = workspace / "unchanged.py"
    path.write_text("limit = 2\n", encoding="utf-8")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    editor.open(path)
    editor.type(path, "limit = 1\n")
    _, results = await run_turn(
        editor, [call("edit_file", path="unchanged.py", edits=[{"oldText": "limit = 1", "newText": "limit = 2"}]), {"text": "ok"}]
    )
    assert not is_error(results[0]), text_of(results[0])
    assert editor.text(path) == "limit = 2\n"
    assert path.stat().st_mtime == 1_000_000_000
