"""Rewind, fork and the queue's actions from Neovim, against the real server."""

from __future__ import annotations

from nvim_harness import Editor

# The user's words (not the editor-state snapshots the server also enters as user messages).
USER_TEXTS = ("return vim.tbl_map(function(e) return e.data.message.content[1].text end, "
              "vim.tbl_filter(function(e) return e.type == 'user/message' "
              "and e.data.message.source ~= 'runtime-context' end, T.session().events))")


def test_fork_opens_a_session_sharing_the_history_and_rewind_cuts_it(editor: Editor) -> None:
    editor.setup([{"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk first question")
    editor.wait_idle()
    editor.cmd("AgentAsk second question")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle'", what="turn 2")
    editor.wait_idle()
    parent = editor.lua("return T.session().id")

    editor.cmd("AgentFork 1")
    editor.wait(f"T.session().id ~= '{parent}'", what="the forked session")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg == 'agent_lsp: forked at turn 1' end)", what="the note")
    assert editor.lua(USER_TEXTS) == ["first question"]
    text = editor.chat_text()
    assert "first question" in text and "answer one" in text and "second question" not in text
    answer = editor.lua(
        "local err, result = require('agent_lsp.client').request_sync(T.client(), 'agent/session/list', vim.empty_dict(), 10000)"
        " return { err = err or vim.NIL, result = result }"
    )
    assert answer["err"] is None, answer["err"]
    listed = answer["result"]["sessions"]
    child = next(s for s in listed if s["sessionId"] != parent)
    assert (child["parentSessionId"], child["forkTurn"]) == (parent, 1)

    # back in the parent: rewind to before turn 2
    editor.cmd(f"AgentResume {parent}")
    editor.wait(f"T.session().id == '{parent}'", what="the parent again")
    editor.cmd("AgentRewind 2")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg == 'agent_lsp: rewound to before turn 2' end)",
                what="the rewind note")
    editor.wait("vim.iter(T.session().events):any(function(e) return e.type == 'session/rewind' end)",
                what="the rewind event")
    rewound = "_⟲ rewound to before turn 2: the agent no longer sees it or what followed_"
    editor.wait(f"vim.iter(T.chat_lines()):any(function(l) return l == '{rewound}' end)", what="the rewind in the chat")
    assert editor.errors() == []


def test_queue_actions_move_edit_and_resume(editor: Editor) -> None:
    editor.setup([{"text": "r1"}, {"text": "r2"}, {"text": "r3"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk start")
    editor.wait_idle()
    editor.cmd("AgentQueuePause")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg == 'agent_lsp: queue paused' end)", what="paused")
    editor.cmd("AgentAsk alpha")
    editor.cmd("AgentAsk beta")
    editor.wait("require('agent_lsp.state').queued_count(T.session()) == 2", what="two queued messages")
    queue = "return vim.tbl_map(function(m) return m.content[1].text end, T.session().inbox.next_turn)"

    editor.lua("T.stub_select('queued: beta', 'Move to the top')")
    editor.cmd("AgentQueueEdit")
    editor.wait("T.session().inbox.next_turn[1].content[1].text == 'beta'", what="the move")
    selects = editor.lua("return _G.test_selects")
    assert selects[0]["labels"] == ["queued: alpha", "queued: beta"]
    assert "Send now" in selects[1]["labels"] and "Steer now" in selects[1]["labels"]

    editor.lua("T.stub_select('queued: alpha', 'Edit') vim.ui.input = function(opts, cb) _G.input_default = opts.default cb('alpha edited') end")
    editor.cmd("AgentQueueEdit")
    editor.wait("T.session().inbox.next_turn[2].content[1].text == 'alpha edited'", what="the edit")
    assert editor.lua("return _G.input_default") == "alpha"
    assert editor.lua(queue) == ["beta", "alpha edited"]
    assert editor.lua("return T.session().turn") == 1  # paused: nothing ran

    editor.cmd("AgentQueueResume")
    editor.wait("T.session().turn == 3 and T.session().status == 'idle'", what="the queued turns")
    editor.wait_idle()
    assert editor.lua(USER_TEXTS) == ["start", "beta", "alpha edited"]
    assert editor.errors() == []


def test_fork_and_rewind_take_the_turn_under_the_cursor_in_the_chat(editor: Editor) -> None:
    editor.setup([{"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk first question")
    editor.wait_idle()
    editor.cmd("AgentAsk second question")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle'", what="turn 2")
    editor.wait_idle()
    editor.cmd("AgentAsk third question")
    editor.wait("T.session().turn == 3 and T.session().status == 'idle'", what="turn 3")
    editor.wait_idle()
    parent = editor.lua("return T.session().id")

    def cursor_on(text: str) -> None:
        editor.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(T.chat_buf())[1])"
                   " local row = vim.fn.index(T.chat_lines(), ...) + 1"
                   " vim.api.nvim_win_set_cursor(0, {row, 0})", text)

    cursor_on("answer two")  # the agent's answer belongs to turn 2 too
    editor.cmd("AgentRewind")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg == 'agent_lsp: rewound to before turn 2' end)",
                what="the rewind of turn 2")

    cursor_on("first question")
    editor.cmd("AgentFork")
    editor.wait(f"T.session().id ~= '{parent}'", what="the forked session")
    editor.wait("vim.iter(_G.test_notes):any(function(n) return n.msg == 'agent_lsp: forked at turn 1' end)", what="the fork")
    assert editor.lua(USER_TEXTS) == ["first question"]
    assert editor.errors() == []


def test_a_queued_message_moved_to_steer_now_shows_as_a_steer(editor: Editor) -> None:
    held_turn = {"text": "working on the first question",
                 "tools": [{"name": "run_command", "arguments": {"command": "echo step"}}]}
    editor.setup([held_turn, {"text": "took the steer"}, {"text": "SHOULD NOT RUN"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("T.hold_select()")
    editor.cmd("AgentAsk first question")
    editor.wait("_G.held ~= nil", what="the permission question")  # the turn runs while it waits
    editor.cmd("AgentAsk steer me now")
    editor.wait("#T.session().inbox.next_turn == 1", what="the queued message")
    editor.lua("_G.permission = _G.held  T.stub_select('queued: steer me now', 'Steer now')")
    editor.cmd("AgentQueueEdit")
    editor.wait("#T.session().inbox.next_step == 1 and #T.session().inbox.next_turn == 0", what="the move into the turn")
    editor.lua("_G.held = _G.permission  T.answer_held('Allow once')")
    editor.wait_idle()
    lines = editor.chat_lines()
    at = lines.index("steer me now")
    assert lines[at - 2 : at] == ["## You (steering)", ""], lines
    assert lines.index("took the steer") > at and "SHOULD NOT RUN" not in lines
    assert [line for line in lines if line.startswith("## You")] == ["## You", "## You (steering)"]
    assert editor.lua("return T.session().turn") == 1
    assert editor.errors() == []
