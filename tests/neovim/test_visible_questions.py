"""Questions are seen where the user looks, in a real headless Neovim against
the real server: a permission question, and the trust question of a project's
MCP server, show as a card at the bottom of the chat window with their keys,
whatever the folds and the scroll (also in a fresh 7-line chat); and a key
typed into the chat as the question appears does not answer it."""

from __future__ import annotations

import json

from nvim_harness import Editor

WAITING = "T.session() ~= nil and require('agent_lsp.permissions').is_waiting(T.session())"

# The question's card over the chat window: its text, and whether it lies on
# the chat window's rows (where the user sees it, whatever the folds and the
# scroll of the transcript), and the chat window's rows.
CARD = r"""
local chat = vim.fn.getwininfo(vim.fn.win_findbuf(T.chat_buf())[1])[1]
local bottom = chat.winrow + (chat.winbar or 0) + chat.height
for _, float in pairs(require('agent_lsp.permissions').floats(T.client().id)) do
  local info = vim.fn.getwininfo(float)[1]
  return {
    text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), "\n"),
    on_chat = not vim.api.nvim_win_get_config(float).hide and info.winrow >= chat.winrow + (chat.winbar or 0)
      and info.winrow + info.height <= bottom,
    chat_rows = (chat.winbar or 0) + chat.height,
  }
end
return vim.NIL
"""


def command(text: str) -> dict:
    return {"tools": [{"name": "run_command", "arguments": {"command": text}}]}


def test_the_question_is_a_card_in_a_small_chat_and_a_stray_key_does_not_answer_it(editor: Editor) -> None:
    # A tool card first: the chat's last line is then in its closed fold.
    script = [{"text": "Looking.", "tools": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
              command("echo visible-ok"), {"text": "ran it"}]
    editor.setup(script, chat={"position": "bottom", "size": 7})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk run echo")
    # The chat window has the focus (the user was reading it) and a key is
    # pressed the moment the question appears: it answers nothing.
    answered_early = editor.lua(
        "vim.wait(20000, function() return " + WAITING + " end, 5) "
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(T.chat_buf())[1]) "
        "vim.api.nvim_feedkeys('a', 'mx', false) "
        "return not (" + WAITING + ")")
    assert answered_early is False
    card = editor.lua(CARD)
    assert card["chat_rows"] == 7 and card["on_chat"], card
    assert "agent_lsp is waiting for you" in card["text"] and "echo visible-ok" in card["text"], card
    assert "[a] Allow once" in card["text"] and "[d] Deny" in card["text"], card

    editor.wait("require('agent_lsp.permissions').accepts_keys(T.client().id)", what="the keys to act")
    editor.lua("vim.api.nvim_feedkeys('a', 'mx', false)")
    editor.wait_idle()
    assert "▸ ✓ run_command echo visible-ok · exit 0" in editor.chat_lines()
    assert editor.lua(CARD) is None
    assert editor.errors() == []


def test_the_trust_question_of_a_project_mcp_server_is_seen_in_the_chat(editor: Editor) -> None:
    (editor.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"tidy": {"command": "true"}}}))
    editor.setup([{"text": "hello"}], chat={"position": "bottom", "size": 7})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk hi")
    editor.wait("#(require('agent_lsp.permissions').waiting[T.client().id] or {}) > 0", what="the trust question")
    card = editor.lua(CARD)
    assert card["on_chat"] and card["chat_rows"] == 7, card
    assert "Start the MCP server 'tidy'" in card["text"] and "[d] Deny" in card["text"], card
    editor.cmd("AgentPermission deny")
    editor.wait_idle()
    assert editor.lua(CARD) is None


def test_a_user_who_looked_away_is_told_when_a_question_waits_and_the_turn_ends(editor: Editor) -> None:
    editor.setup([command("echo away"), {"text": "ran it"}, {"text": "second"}])
    editor.lua("_G.alerts = {} require('agent_lsp.config').options.attention.hook = "
               "function(kind, text) table.insert(_G.alerts, { kind, text }) end")
    editor.edit("a.py")
    editor.wait_attached()
    editor.lua("vim.api.nvim_exec_autocmds('FocusLost', {})")
    editor.cmd("AgentAsk run echo")
    editor.wait(WAITING, what="the question")
    editor.cmd("AgentPermission once")
    editor.wait_idle()
    alerts = editor.lua("return _G.alerts")
    assert [kind for kind, _ in alerts] == ["waiting", "done"], alerts
    assert "echo away" in alerts[0][1] and "turn finished" in alerts[1][1], alerts
    # Back at the editor: nothing more.
    editor.lua("vim.api.nvim_exec_autocmds('FocusGained', {})")
    editor.cmd("AgentAsk again")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the second turn")
    assert len(editor.lua("return _G.alerts")) == 2
