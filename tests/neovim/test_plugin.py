"""The Neovim plugin end to end: real headless Neovim, real agent_lsp server
(stdio), scripted model. Each test drives the editor as a user would (Ex
commands, keys, vim.ui.select) and asserts on buffers, files and messages."""

from __future__ import annotations

from pathlib import Path

from nvim_harness import SERVER_CMD, Editor, start_editor, stop_editor

from agent_lsp.sandbox import sandbox_availability


def test_setup_starts_the_server_for_the_buffers_workspace(editor: Editor) -> None:
    editor.setup([])
    editor.edit("a.py")
    editor.wait_attached()
    client = editor.lua("local c = T.client() return {root = c.config.root_dir, name = c.name}")
    assert client == {"root": str(editor.workspace), "name": "agent_lsp"}
    # A second file of the same workspace reuses the server.
    editor.edit("notes.txt")
    editor.wait("#vim.lsp.get_clients({name = 'agent_lsp', bufnr = 0}) == 1", what="notes.txt to attach")
    assert editor.lua("return #vim.lsp.get_clients({name = 'agent_lsp'})") == 1
    assert editor.lua("return require('agent_lsp').status()") == "agent idle"
    assert editor.errors() == []


def test_ask_streams_the_answer_into_the_chat_without_moving_the_cursor(editor: Editor) -> None:
    answer = "Hello from the agent, streamed slowly."
    editor.setup([{"text": answer, "chunkDelayMs": 15}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("vim.api.nvim_win_set_cursor(0, {2, 3})")
    code_win = editor.lua("return vim.api.nvim_get_current_win()")
    editor.cmd("AgentChat")
    assert editor.lua("return vim.api.nvim_get_current_win()") == code_win
    # Record every change of the chat buffer: where it happened, and what the chat showed then.
    editor.lua(
        """
        _G.chat_changes = {}
        vim.api.nvim_buf_attach(T.chat_buf(), false, {
          on_lines = function(_, buf, _, first, last_old, last_new)
            table.insert(_G.chat_changes, {first = first, total = vim.api.nvim_buf_line_count(buf),
              added = last_new - last_old, status = T.status(),
              text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n")})
          end,
        })
        """
    )
    editor.cmd("AgentAsk what does this file do?")
    editor.wait_idle()
    lines = editor.chat_lines()
    assert lines == ["## You", "", "what does this file do?", "", "## Agent", "", answer]
    changes = editor.lua("return _G.chat_changes")
    # The answer appeared piece by piece while the turn ran (it streamed) ...
    partial = [c for c in changes if "Hello" in c["text"] and answer not in c["text"]]
    assert partial and all(c["status"] == "running" for c in partial), changes
    # ... and, after the (empty) chat was cleared for the new session, every
    # change touched only the end of the buffer (no re-render).
    assert changes[0]["text"] == ""
    assert all(c["first"] >= c["total"] - c["added"] - 1 for c in changes[1:]), \
        [(c["first"], c["total"], c["added"]) for c in changes]
    # The user's window and cursor did not move; the chat window followed the text.
    assert editor.lua("return vim.api.nvim_get_current_win()") == code_win
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)") == [2, 3]
    chat_win = editor.lua("return vim.fn.win_findbuf(T.chat_buf())[1]")
    assert editor.lua(f"return vim.api.nvim_win_get_cursor({chat_win})[1]") == len(lines)
    assert editor.lua("return vim.bo[T.chat_buf()].filetype") == "markdown"
    winbar = editor.lua(f"return vim.api.nvim_win_call({chat_win}, function() "
                        f"vim.g.statusline_winid = {chat_win} return require('agent_lsp.chat').winbar() end)")
    assert "idle" in winbar and "turn 1" in winbar and "ctx" in winbar and "/128k" in winbar
    assert editor.errors() == []


# The first reply runs a command, whose permission question is held open:
# the turn is then running for as long as the test needs.
HELD_TURN = {"text": "working on the first question",
             "tools": [{"name": "run_command", "arguments": {"command": "echo step"}}]}


def test_steer_and_queue_during_a_running_turn(editor: Editor) -> None:
    editor.setup([HELD_TURN, {"text": "steered answer"}, {"text": "answer to the queued question"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("T.hold_select()")
    editor.cmd("AgentAsk first question")
    editor.wait("_G.held ~= nil", what="the permission question")
    assert editor.lua("return T.status()") == "running"
    editor.cmd("AgentSteer focus on the tests")
    editor.cmd("AgentAsk queued question")
    editor.wait("require('agent_lsp.state').queued_count(T.session()) == 2", what="two queued messages")
    assert editor.lua("return require('agent_lsp').status()") == "agent running (2 queued)"
    editor.lua("T.answer_held('Allow once')")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the queued turn")
    text = editor.chat_text()
    order = ["first question", "working on the first question", "run_command echo step",
             "## You (steering)", "focus on the tests", "steered answer", "queued question",
             "answer to the queued question"]
    positions = [text.find(part) for part in order]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), text
    assert editor.lua("return require('agent_lsp').status()") == "agent idle"


def test_queue_shows_and_removes_a_queued_message(editor: Editor) -> None:
    editor.setup([HELD_TURN, {"text": "first turn done"}, {"text": "SHOULD NOT RUN"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("T.hold_select()")
    editor.cmd("AgentAsk start")
    editor.wait("_G.held ~= nil", what="the permission question")
    editor.cmd("AgentAsk please drop me")
    editor.wait("require('agent_lsp.state').queued_count(T.session()) == 1", what="the queued message")
    # :AgentQueue asks through vim.ui.select too: answer it at once.
    editor.lua("_G.permission = _G.held  T.stub_select('please drop me')")
    editor.cmd("AgentQueue")
    editor.wait("require('agent_lsp.state').queued_count(T.session()) == 0", what="the removal")
    selects = editor.lua("return _G.test_selects")
    assert selects[0]["labels"] == ["queued: please drop me"]
    editor.lua("_G.held = _G.permission  T.answer_held('Allow once')")
    editor.wait_idle()
    editor.lua("vim.wait(300)")  # a second turn, if any, would start now
    assert editor.lua("return T.session().turn") == 1
    text = editor.chat_text()
    assert "first turn done" in text
    assert "please drop me" not in text and "SHOULD NOT RUN" not in text
    assert editor.errors() == []


def test_cancel_from_the_chat_buffer_key(editor: Editor) -> None:
    editor.setup([{"hang": "partial answer"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk never finishes")
    editor.wait("T.chat_text():find('partial answer', 1, true) ~= nil", what="the partial answer")
    assert editor.lua("return T.status()") == "running"
    editor.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(T.chat_buf())[1])")
    editor.lua("vim.api.nvim_feedkeys(vim.keycode('<C-c>'), 'mx', false)")
    editor.wait_idle()
    lines = editor.chat_lines()
    assert lines[-1] == "_⏹ cancelled_"
    assert "partial answer" in editor.chat_text()
    assert editor.lua("return require('agent_lsp').status(T.chat_buf())") == "agent idle"


def test_agent_edit_is_applied_to_the_open_buffer_written_and_undoable(editor: Editor) -> None:
    editor.setup([
        {"tools": [{"name": "edit_file", "arguments": {
            "path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 42"}]}}]},
        {"tools": [{"name": "edit_file", "arguments": {
            "path": "notes.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}}]},
        {"text": "Both files edited."},
    ])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk change x")
    editor.wait_idle()
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["x = 42", "print(x)"]
    assert editor.lua("return vim.bo.modified") is False
    assert (editor.workspace / "a.py").read_text() == "x = 42\nprint(x)\n"
    # A file that was not open is changed on disk and leaves no modified buffer behind.
    assert (editor.workspace / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert editor.lua("return #vim.tbl_filter(function(b) return vim.bo[b].modified end, vim.api.nvim_list_bufs())") == 0
    # The chat shows the edit as a folded section, and :AgentDiff shows its diff.
    lines = editor.chat_lines()
    header = next(i for i, l in enumerate(lines) if l.startswith("▸ ✓ edit_file a.py"))
    assert lines[header].endswith(":AgentDiff")
    # The edit's one-line summary is plain text; only the diff is a code block.
    assert lines[header + 1].startswith("  Edited a.py") and lines[header + 2] == "  ```diff"
    chat_win = editor.lua("return vim.fn.win_findbuf(T.chat_buf())[1]")
    assert editor.lua(f"return vim.api.nvim_win_call({chat_win}, function() return vim.fn.foldclosed({header + 1}) end)") == header + 1
    editor.lua(f"vim.api.nvim_set_current_win({chat_win}) vim.api.nvim_win_set_cursor(0, {{{header + 1}, 0}})")
    editor.cmd("AgentDiff")
    assert editor.lua("return vim.bo.filetype") == "diff"
    diff = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert "-x = 1" in diff and "+x = 42" in diff
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") == "agent-lsp://diff/a.py"
    # `q` closes the diff and returns to the chat.
    editor.lua("vim.api.nvim_feedkeys('q', 'mx', false)")
    assert editor.lua("return vim.api.nvim_get_current_win()") == chat_win
    # The agent's edit is undoable in the buffer.
    editor.cmd("wincmd p")
    editor.cmd("buffer " + str(editor.workspace / "a.py"))
    editor.cmd("silent undo")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["x = 1", "print(x)"]
    assert editor.errors() == []


def test_permission_prompt_is_answered_through_vim_ui_select(editor: Editor) -> None:
    editor.setup([
        {"tools": [{"name": "run_command", "arguments": {"command": "echo allowed-output"}}]},
        {"text": "ran it"},
        {"tools": [{"name": "run_command", "arguments": {"command": "echo denied-output"}}]},
        {"text": "was denied"},
    ])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("T.stub_select('Allow once', 'Deny')")
    editor.cmd("AgentAsk run echo")
    editor.wait_idle()
    editor.cmd("AgentAsk run it again")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the second turn")
    selects = editor.lua("return _G.test_selects")
    assert [s["kind"] for s in selects] == ["agent_lsp_permission", "agent_lsp_permission"]
    assert selects[0]["labels"] == ["Allow once", "Allow for this session", "Always allow", "Deny"]
    assert "echo allowed-output" in selects[0]["prompt"]
    lines = editor.chat_lines()
    assert "▸ ✓ run_command echo allowed-output · exit 0" in lines
    assert "▸ ✗ run_command echo denied-output · denied" in lines
    assert "  allowed-output" in lines
    assert not any(l.strip() == "denied-output" for l in lines)


def test_resume_renders_the_same_transcript(workspace: Path, sessions_dir: Path, tmp_path: Path, monkeypatch) -> None:
    script = [
        {"reasoning": "look at the file first", "text": "Let me read it.",
         "tools": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
        {"tools": [{"name": "edit_file", "arguments": {
            "path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 7"}]}}]},
        {"text": "Set x to 7.\nAnything else?"},
    ]
    first = start_editor(workspace, tmp_path / "home1", monkeypatch)
    try:
        first.setup(script, sessions_dir)
        first.edit("a.py")
        first.wait_attached()
        first.cmd("AgentAsk set x to 7")
        first.wait_idle()
        live = first.chat_lines()
        session_id = first.lua("return T.session().id")
    finally:
        stop_editor(first, wait_for_server=True)
    assert "▸ thinking" in live and "Set x to 7." in live and "Anything else?" in live

    second = start_editor(workspace, tmp_path / "home2", monkeypatch)
    try:
        second.setup([], sessions_dir)
        second.edit("notes.txt")
        second.wait_attached()
        second.lua("T.stub_select('set x to 7', 'Resume')")
        second.cmd("AgentSessions")
        second.wait(f"T.session() ~= nil and T.session().id == '{session_id}' and #T.chat_lines() > 1",
                    what="the resumed session")
        assert second.chat_lines() == live
        assert second.lua("return T.session().turn") == 1
        # :AgentResume with an id shows the same.
        second.cmd("AgentNew")
        second.wait(f"T.session().id ~= '{session_id}'", what="a new session")
        assert second.chat_lines() == [""]
        second.cmd("AgentResume " + session_id)
        second.wait(f"T.session().id == '{session_id}' and #T.chat_lines() > 1", what="the resumed session")
        assert second.chat_lines() == live
        assert second.errors() == []
    finally:
        stop_editor(second)


def test_checkhealth_reports_ok(editor: Editor) -> None:
    editor.setup([])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("checkhealth agent_lsp")
    report = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "- ✅ OK Neovim 0.11" in report
    assert "OK server command: " + " ".join(SERVER_CMD) in report and "agent-lsp" in report
    assert "OK model: the scripted model" in report
    assert "OK server running for " + str(editor.workspace) in report
    found = sandbox_availability()
    if found.works:  # the sandbox the commands run in, or why none
        assert "OK sandbox: bubblewrap (" in report and ", no network" in report
        assert "ERROR" not in report and "WARNING" not in report
    else:
        assert f"WARNING sandbox: none, commands run unsandboxed and are asked about: {found.why_not}" in report
        assert "ERROR" not in report and report.count("WARNING") == 1


def test_a_missing_server_gives_one_clear_message(editor: Editor) -> None:
    editor.lua("require('agent_lsp').setup({ cmd = { '/nonexistent/agent-lsp', 'serve' } })")
    editor.edit("a.py")
    editor.edit("notes.txt")
    editor.cmd("AgentAsk hello")
    errors = editor.errors()
    assert len(errors) == 1, errors
    assert "`/nonexistent/agent-lsp` was not found" in errors[0]
    assert "pipx install /path/to/checkout" in errors[0] and "setup({ cmd =" in errors[0]
    editor.cmd("checkhealth agent_lsp")
    report = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "ERROR" in report and "was not found" in report and "pipx install /path/to/checkout" in report


def test_an_always_confirmed_command_offers_only_the_answers_the_server_honours(editor: Editor) -> None:
    # `rm -rf` is asked about every time: "Always allow" would be ignored, so it
    # is not offered, and the prompt says why.
    editor.setup([
        {"tools": [{"name": "run_command", "arguments": {"command": "rm -rf build"}}]},
        {"text": "removed"},
    ])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("T.stub_select('Allow once')")
    editor.cmd("AgentAsk clean up")
    editor.wait_idle()
    selects = editor.lua("return _G.test_selects")
    assert selects[0]["labels"] == ["Allow once", "Deny"]
    assert "rm -rf build" in selects[0]["prompt"]
    assert "Always confirmed: this command is a recursive delete" in selects[0]["prompt"]


def test_an_agent_edit_never_writes_the_users_unsaved_changes(editor: Editor) -> None:
    # The user typed in a.py without saving; the agent's edit lands in the
    # buffer beside it, and neither is written to disk behind the user's back.
    editor.setup([
        {"tools": [{"name": "edit_file", "arguments": {
            "path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 42"}]}}]},
        {"text": "Edited."},
    ])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'print(x)  # unsaved note' })")
    editor.cmd("AgentAsk change x")
    editor.wait_idle()
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["x = 42", "print(x)  # unsaved note"]
    assert editor.lua("return vim.bo.modified") is True
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x)\n"
    header = next(l for l in editor.chat_lines() if l.startswith("▸ ✓ edit_file a.py"))
    assert "not saved: the buffer had your unsaved changes" in header
    # The model is told too: a command it runs next would read the old file.
    result = editor.lua("for _, e in ipairs(T.session().events) do if e.type == 'tool/result' then "
                        "return e.data.message.content[1].text end end")
    assert "a.py: left unsaved in the editor because it has the user's unsaved changes; " \
        "the file on disk is unchanged" in result, result
    # Once the user writes the buffer, the agent's next edits are saved again.
    editor.cmd("write")
    assert editor.lua("return require('agent_lsp.edits').left_unsaved(vim.api.nvim_buf_get_name(0))") is False
    assert editor.errors() == []


def test_agent_fix_sends_the_diagnostics_under_the_cursor_from_every_source(editor: Editor) -> None:
    # pyright's diagnostic (another namespace, never sent to agent_lsp by a code
    # action request) goes with :AgentFix as context.
    editor.setup([{"text": "fixed it"}, {"text": "looked at it"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("""
      local ns = vim.api.nvim_create_namespace('test.pyright')
      vim.diagnostic.set(ns, 0, { { lnum = 1, col = 0, message = 'x is possibly unbound', source = 'pyright',
                                     severity = vim.diagnostic.severity.ERROR } })
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
    """)
    editor.cmd("AgentFix")
    editor.wait_idle()
    user = editor.lua("for _, e in ipairs(T.session().events) do if e.type == 'user/message' then "
                      "return vim.json.encode(e.data.message) end end")
    assert "Fix this problem: pyright: x is possibly unbound" in user
    assert '"kind":"diagnostic"' in user.replace(" ", "") and "print(x)" in user
    # No diagnostic on line 1: the agent is asked to find the problem in that line.
    editor.lua("vim.api.nvim_win_set_cursor(0, { 1, 0 })")
    editor.cmd("AgentFix")
    editor.wait("#vim.tbl_filter(function(e) return e.type == 'turn/end' end, T.session().events) == 2", what="the second turn")
    second = editor.lua("local last for _, e in ipairs(T.session().events) do if e.type == 'user/message' then "
                        "last = vim.json.encode(e.data.message) end end return last")
    assert "Find the problem in this code and fix it." in second and "x = 1" in second
    assert editor.errors() == []
