"""More of the commands against the real server: the selection as context,
the input window, revert, the event log."""

from __future__ import annotations

from nvim_harness import Editor


def user_message(editor: Editor, index: int = 0) -> dict:
    messages = editor.lua(
        "return vim.tbl_map(function(e) return e.data.message end, "
        "vim.tbl_filter(function(e) return e.type == 'user/message' end, T.session().events))"
    )
    return messages[index]


def test_a_line_range_attaches_the_lines_as_context(editor: Editor) -> None:
    editor.setup([{"text": "It prints x."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("1,2AgentAsk explain these lines")
    editor.wait_idle()
    message = user_message(editor)
    [context] = message["context"]
    assert context["kind"] == "selection"
    assert context["uri"] == (editor.workspace / "a.py").as_uri()
    assert context["text"] == "x = 1\nprint(x)"
    assert context["range"] == {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
    lines = editor.chat_lines()
    assert lines[:4] == ["## You", "", "explain these lines", "> context: selection a.py:1-2"]
    assert not any("<context>" in line for line in lines)


def test_a_visual_selection_keeps_its_columns(editor: Editor) -> None:
    editor.setup([{"text": "A builtin."}])
    (editor.workspace / "u.py").write_text("s = 'héllo'\nprint(s)\n")
    editor.edit("u.py")
    editor.wait_attached()
    # Select «héllo» (é is 2 bytes, 1 UTF-16 unit) charwise, then :'<,'>AgentAsk.
    editor.lua("vim.api.nvim_win_set_cursor(0, {1, 5}) vim.cmd('normal! v4l\\27')")
    editor.cmd("'<,'>AgentAsk what is this word")
    editor.wait_idle()
    [context] = user_message(editor)["context"]
    assert context["text"] == "héllo"
    # Columns in the negotiated position encoding (Neovim 0.11 + pygls agree on utf-8).
    encoding = editor.lua("return T.client().offset_encoding")
    end = {"utf-8": 11, "utf-16": 10, "utf-32": 10}[encoding]
    assert context["range"] == {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": end}}


def test_ask_without_text_opens_an_input_window(editor: Editor) -> None:
    editor.setup([{"text": "Got your two lines."}])
    editor.edit("a.py")
    editor.wait_attached()
    code_win = editor.lua("return vim.api.nvim_get_current_win()")
    editor.cmd("AgentAsk")
    assert editor.lua("return vim.api.nvim_win_get_config(0).relative") == "editor"
    assert editor.lua("return vim.bo.filetype") == "markdown"
    editor.lua("vim.cmd('stopinsert') vim.api.nvim_buf_set_lines(0, 0, -1, false, {'first line', 'second line'})")
    editor.lua("vim.api.nvim_feedkeys(vim.keycode('<C-s>'), 'mx', false)")
    assert editor.lua("return vim.api.nvim_get_current_win()") == code_win
    editor.wait_idle()
    assert editor.chat_lines()[:4] == ["## You", "", "first line", "second line"]
    assert "Got your two lines." in editor.chat_lines()
    # Cancelling the input window sends nothing.
    editor.cmd("AgentAsk")
    editor.lua("vim.cmd('stopinsert') vim.api.nvim_buf_set_lines(0, 0, -1, false, {'never sent'})")
    editor.lua("vim.api.nvim_feedkeys('q', 'mx', false)")
    assert editor.lua("return vim.api.nvim_get_current_win()") == code_win
    editor.lua("vim.wait(200)")
    assert "never sent" not in editor.chat_text()


def test_revert_undoes_the_edits_of_the_last_turn(editor: Editor) -> None:
    editor.setup([
        {"tools": [{"name": "edit_file", "arguments": {
            "path": "a.py", "edits": [{"oldText": "print(x)", "newText": "print(x * 2)"}]}}]},
        {"text": "Doubled."},
    ])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk double it")
    editor.wait_idle()
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x * 2)\n"
    editor.cmd("AgentRevert")
    editor.wait("vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'print(x)'", what="the revert")
    editor.wait(f"io.open('{editor.workspace / 'a.py'}'):read('a') == 'x = 1\\nprint(x)\\n'", what="the file on disk")
    # One line naming the files (a multi-line message would stop at a hit-enter prompt).
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg == 'agent_lsp: reverted turn 1: a.py' end)",
                what="the revert report")
    # The logged revert is drawn in the chat, in place.
    editor.wait("vim.iter(T.chat_lines()):any(function(l) return l == '_↺ reverted turn 1: a.py_' end)",
                what="the revert in the chat")
    # A turn without edits says so rather than "0 file(s)".
    editor.cmd("AgentAsk just talk")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the second turn")
    editor.cmd("AgentRevert")
    editor.wait("_G.test_notes[#_G.test_notes].msg == 'agent_lsp: turn 2 made no file edits'",
                what="the empty revert report")
    # Resumed, the chat shows the revert exactly as it was drawn live.
    live = editor.chat_lines()
    session_id = editor.lua("return T.session().id")
    editor.cmd("AgentNew")
    editor.wait(f"T.session().id ~= '{session_id}'", what="a new session")
    editor.cmd("AgentResume " + session_id)
    editor.wait(f"T.session().id == '{session_id}' and #T.chat_lines() > 1", what="the resumed session")
    assert editor.chat_lines() == live
    assert "_↺ reverted turn 1: a.py_" in live
    assert editor.errors() == []


def test_log_shows_the_session_events(editor: Editor) -> None:
    editor.setup([{"text": "ok"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk log me")
    editor.wait_idle()
    count = editor.lua("return #T.session().events")
    editor.cmd("AgentLog")
    assert editor.lua("return vim.bo.filetype") == "json"
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert len(lines) == count
    assert '"type":"turn/end"' in lines[-1].replace(" ", "")


def test_without_autostart_the_first_command_starts_the_server_for_the_cwd(editor: Editor) -> None:
    editor.setup([{"text": "started on demand"}], autostart=False)
    editor.edit("a.py")
    assert editor.lua("return #vim.lsp.get_clients({ name = 'agent_lsp' })") == 0
    assert editor.lua("return require('agent_lsp').status()") == ""
    editor.cmd("enew")
    editor.cmd("AgentAsk hello")
    editor.wait_idle()
    assert editor.lua("return T.client().config.root_dir") == str(editor.workspace)
    assert "started on demand" in editor.chat_lines()
    # The unnamed buffer is not attached (there is no file to sync).
    assert editor.lua("return #vim.lsp.get_clients({ name = 'agent_lsp', bufnr = 0 })") == 0


def test_with_save_agent_edits_off_the_edited_buffer_is_left_unsaved(editor: Editor) -> None:
    editor.setup([
        {"tools": [{"name": "edit_file", "arguments": {
            "path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 5"}]}}]},
        {"text": "Edited, not saved."},
    ], save_agent_edits=False)
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk change x")
    editor.wait_idle()
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]") == "x = 5"
    assert editor.lua("return vim.bo.modified") is True
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x)\n"


def test_a_session_started_by_a_code_action_shows_in_the_chat(editor: Editor) -> None:
    editor.setup([{"text": "Answer to the code action."}])
    editor.edit("a.py")
    editor.wait_attached()
    # The server's own code action (no plugin command involved): ask about lines 1-2.
    editor.lua(
        "vim.lsp.buf.code_action({ apply = true, range = { start = { 1, 0 }, ['end'] = { 2, 3 } }, "
        "filter = function(a) return a.title:find('Ask agent', 1, true) ~= nil end })"
    )
    editor.wait_idle()
    assert "Answer to the code action." in editor.chat_lines()
    assert editor.lua("return #vim.fn.win_findbuf(T.chat_buf())") == 1
    assert "> context: selection a.py:1-2" in editor.chat_lines()
    # The chat shows the answer: it is not echoed as well (a long one would stop at a hit-enter prompt).
    editor.lua("vim.wait(200)")  # a window/showMessage, if any, arrives with the turn's end
    assert "Answer to the code action." not in editor.lua("return vim.fn.execute('messages')")
    assert editor.errors() == []


def test_fix_with_agent_is_a_code_action_on_any_range(editor: Editor) -> None:
    # No diagnostic anywhere: "Fix with agent" is offered for the selected lines
    # and asks the agent to find the problem in them.
    editor.setup([{"text": "Found and fixed it."}])
    editor.edit("a.py")
    editor.wait_attached()
    assert editor.lua("return #vim.diagnostic.get(0)") == 0
    editor.lua(
        "vim.lsp.buf.code_action({ apply = true, range = { start = { 2, 0 }, ['end'] = { 2, 8 } }, "
        "filter = function(a) return a.title == 'Fix with agent' end })"
    )
    editor.wait_idle()
    message = user_message(editor)
    assert message["content"][0]["text"].startswith("Find the problem in this code and fix it.")
    assert [(c["kind"], c["text"]) for c in message["context"]] == [("selection", "print(x)\n")]
    assert "Found and fixed it." in editor.chat_lines()
    assert editor.errors() == []


def test_sessions_can_delete_the_shown_session(editor: Editor) -> None:
    editor.setup([{"text": "to be deleted"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk remember this")
    editor.wait_idle()
    editor.lua("T.stub_select('remember this', 'Delete')")
    editor.cmd("AgentSessions")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg:find('deleted', 1, true) end)",
                what="the deletion")
    assert editor.lua("return _G.test_selects[1].labels")[0].endswith("  remember this  [1 turn, shown]")
    assert editor.lua("return _G.test_selects[2].labels") == ["Resume", "Delete"]
    assert editor.chat_lines() == [""]
    assert editor.lua("return T.session()") is None
    err, result = editor.lua(
        "local c = T.client() local e, r = require('agent_lsp.client').request_sync(c, 'agent/session/list', "
        "{ workspaceUri = vim.uri_from_fname(c.config.root_dir) }) return { e or vim.NIL, r }"
    )
    assert err is None and result["sessions"] == []


def test_sessions_with_words_lists_the_sessions_whose_messages_have_them(editor: Editor) -> None:
    # each reply fits its question: which session gets which does not hang on the script's order
    editor.setup([{"when": "tokenizer", "text": "The lexer drops astral emoji."}, {"when": "loader", "text": "Renamed."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk why is the tokenizer lossy")
    editor.wait_idle()
    editor.cmd("AgentNew")
    editor.cmd("AgentAsk rename the loader")
    editor.wait_idle()
    editor.lua("T.stub_select()")
    editor.cmd("AgentSessions astral emoji")  # words of the model's answer, not of any title
    editor.wait("_G.test_selects[1] ~= nil", what="the picker")
    (select,) = editor.lua("return _G.test_selects")
    assert select["prompt"] == 'agent_lsp: sessions matching "astral emoji"'
    (label,) = select["labels"]
    assert "why is the tokenizer lossy" in label and label.endswith("“The lexer drops astral emoji.”")
    editor.cmd("AgentSessions narwhal")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg:find('mentions', 1, true) end)", what="the note")
    assert any('no session of this workspace mentions "narwhal"' in n for n in
               editor.lua("return vim.tbl_map(function(n) return n.msg end, _G.test_notes)"))
    assert editor.errors() == []


def test_an_idle_agent_shows_in_the_statusline_and_cancel_says_nothing_runs(editor: Editor) -> None:
    editor.cmd("set laststatus=2 statusline=%{v:lua.require'agent_lsp'.status()}")
    editor.setup([{"text": "done"}])
    editor.edit("a.py")
    editor.cmd("redraw")
    editor.wait_attached()
    # No key is pressed: the plugin itself redraws the statusline once the server attaches.
    editor.wait("vim.fn.screenstring(vim.o.lines - 1, 1) == 'a'", 3000, "the statusline redraw")
    row = editor.lua("local t = {} for c = 1, 10 do t[c] = vim.fn.screenstring(vim.o.lines - 1, c) end "
                     "return table.concat(t)")
    assert row == "agent idle"
    editor.cmd("AgentAsk quick one")
    editor.wait_idle()
    editor.cmd("AgentCancel")
    editor.wait("_G.test_notes[1] ~= nil", what="a message")
    assert editor.lua("return vim.tbl_map(function(n) return n.msg end, _G.test_notes)") == \
        ["agent_lsp: no turn is running"]
    assert editor.chat_lines()[-1] == "done"


def test_asking_from_the_chat_shows_the_question_and_the_streamed_answer(editor: Editor) -> None:
    long_answer = " ".join(f"word{i}" for i in range(30))
    editor.setup([{"text": "first answer\n" + "\n".join(f"line {i}" for i in range(60))},
                  {"text": long_answer, "chunkDelayMs": 1}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk fill the chat")
    editor.wait_idle()
    # The user goes to the chat, reads the top, and asks from there with its `i` key.
    editor.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(T.chat_buf())[1]) vim.cmd('normal! gg')")
    chat_win = editor.lua("return vim.api.nvim_get_current_win()")
    editor.lua("vim.api.nvim_feedkeys('i', 'mx', false)")
    editor.lua("vim.cmd('stopinsert') vim.api.nvim_buf_set_lines(0, 0, -1, false, {'second question'})")
    editor.lua("vim.api.nvim_feedkeys(vim.keycode('<C-s>'), 'mx', false)")
    assert editor.lua("return vim.api.nvim_get_current_win()") == chat_win
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the second turn")
    editor.cmd("redraw")
    # The window followed: the end of the streamed answer is on screen, the question just above.
    last = editor.lua("return vim.api.nvim_buf_line_count(T.chat_buf())")
    assert editor.chat_lines()[-1] == long_answer
    assert editor.lua(f"return vim.fn.screenpos({chat_win}, {last}, {len(long_answer)}).row") > 0
    assert editor.lua(f"return vim.fn.screenpos({chat_win}, {last - 4}, 1).row") > 0  # "second question"
    assert editor.chat_lines()[last - 5] == "second question"


def test_the_session_exports_as_markdown_to_a_buffer_and_a_file(editor: Editor) -> None:
    editor.setup([{"text": "Buy it on the way home."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk remember the milk")
    editor.wait_idle()
    sid = editor.lua("return T.session().id")
    expected = ["# remember the milk", "", f"Session `{sid}`", "", "## You", "", "remember the milk", "",
                "## Agent", "", "Buy it on the way home."]
    editor.cmd("AgentSessionExport")
    editor.wait("vim.bo.filetype == 'markdown'", what="the exported buffer")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == expected
    target = editor.workspace / "milk.md"
    editor.cmd(f"AgentSessionExport {target}")
    editor.wait(f"vim.fn.filereadable('{target}') == 1", what="the exported file")
    assert target.read_text(encoding="utf-8") == "\n".join(expected) + "\n"
    assert editor.errors() == []
