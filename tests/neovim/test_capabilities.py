"""MCP servers, skills, hooks and sub-agent sessions in Neovim, against the
real server: an MCP tool card names its server and tool, :AgentMcp and
:checkhealth list the servers (a real `mcp-server-time`), :AgentSkill runs a
skill with completion, hook runs are folded lines live and on resume, and
:AgentSessions lists a sub-agent's session under its parent's."""

from __future__ import annotations

import sys

from nvim_harness import SERVER_CMD, Editor

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def setup(editor: Editor, script: list[dict], **settings) -> None:
    editor.lua("require('agent_lsp').setup(...)",
               {"cmd": SERVER_CMD, "settings": {"model": {"provider": "scripted", "script": script}, **settings}})
    editor.edit("a.py")
    editor.wait_attached()


def buffer_text(editor: Editor) -> str:
    return "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))


def test_an_mcp_tool_card_and_the_server_list_in_agentmcp_and_checkhealth(editor: Editor) -> None:
    call = {"name": "mcp__time__get_current_time", "id": "t1", "arguments": {"timezone": "UTC"}}
    setup(editor, [{"tools": [call]}, {"text": "It is now."}],
          mcpServers={"time": TIME}, permissions={"rules": [{"tool": "mcp__time__*", "action": "allow"}]})
    editor.cmd("AgentAsk what time is it")
    editor.wait_idle(60000)  # the first request waits for the server's cold start
    lines = editor.chat_lines()
    (card,) = [line for line in lines if "get_current_time" in line]
    assert card.startswith("▸ ✓ time › get_current_time"), card
    assert '"timezone": "UTC"' in "\n".join(lines)

    editor.cmd("AgentMcp")
    editor.wait("vim.api.nvim_buf_get_name(0):find('agent%-lsp://mcp') ~= nil", what="the MCP view")
    listing = buffer_text(editor)
    first = listing.splitlines()[0]
    assert first.startswith("time ") and "ready · 2 tools" in first and "editor · stdio" in first, listing
    assert "tools: get_current_time, convert_time" in listing
    editor.cmd("close")

    editor.cmd("checkhealth agent_lsp")
    report = buffer_text(editor)
    assert "OK MCP time" in report and "ready · 2 tools" in report, report


def test_a_failed_mcp_server_is_an_error_in_checkhealth_with_its_reason(editor: Editor) -> None:
    setup(editor, [], mcpServers={"broken": {"type": "ftp", "url": "ftp://example.invalid"}})
    editor.cmd("AgentMcp")
    editor.wait("vim.api.nvim_buf_get_name(0):find('agent%-lsp://mcp') ~= nil", what="the MCP view")
    listing = buffer_text(editor).splitlines()
    assert listing[0].startswith("broken ") and "failed" in listing[0], listing
    assert listing[1].startswith("    ") and "ftp" in listing[1]  # the reason
    editor.cmd("close")
    editor.cmd("checkhealth agent_lsp")
    report = buffer_text(editor)
    assert "ERROR MCP broken" in report and "ftp" in report, report


def test_agentskill_completes_names_and_runs_the_skill(editor: Editor) -> None:
    skill = editor.workspace / ".agents" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Greets someone\n---\nSay hello by name.\n")
    setup(editor, [{"text": "Hello, Bob!"}])
    assert editor.lua("return vim.fn.getcompletion('AgentSkill gr', 'cmdline')") == ["greet"]
    assert editor.lua("return vim.fn.getcompletion('AgentSkill greet B', 'cmdline')") == []
    editor.cmd("AgentSkill greet for Bob")
    editor.wait_idle()
    # The chat shows what the user did, a chip; the model reads the skill's instructions.
    text = editor.chat_text()
    assert "`/greet for Bob`" in editor.chat_lines() and "Say hello by name." not in text, text
    assert "Hello, Bob!" in text
    sent = editor.lua("for _, e in ipairs(T.session().events) do if e.type == 'user/message' "
                      "and e.data.message.source == 'user' then return e.data.message.content[1].text end end")
    assert 'The user invoked the skill "greet"' in sent and "Say hello by name." in sent and "for Bob" in sent

    editor.lua("T.stub_select('greet')")
    editor.cmd("AgentSkill")
    editor.wait("vim.tbl_contains(T.chat_lines(), '`/greet`')", what="the second run")
    (select,) = editor.lua("return _G.test_selects")
    assert select["kind"] == "agent_lsp_skill" and select["labels"] == ["greet — Greets someone (project)"]
    assert editor.errors() == []


def test_hook_runs_are_folded_lines_in_the_turn_live_and_on_resume(editor: Editor) -> None:
    (editor.workspace / "guard.sh").write_text("echo 'echo is not allowed here' >&2\nexit 2\n")  # hooks run in the root
    hooks = {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo noted"}]}],
        "PreToolUse": [{"matcher": "run_command", "hooks": [{"type": "command", "command": "sh guard.sh"}]}],
    }
    run = {"name": "run_command", "id": "r1", "arguments": {"command": "echo hi"}}
    setup(editor, [{"tools": [run]}, {"text": "Blocked, as expected."}], hooks=hooks)
    editor.cmd("AgentAsk run it")
    editor.wait_idle()

    def hook_lines() -> list[tuple[str, int]]:
        return editor.lua(
            "local out = {} local buf = T.chat_buf() for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do"
            " if l:find('⚑ hook', 1, true) then local win = vim.fn.bufwinid(buf)"
            " out[#out + 1] = { l, win ~= -1 and vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(i) end) or -2 }"
            " end end return out")

    def check() -> None:
        shown = hook_lines()
        assert [line for line, _ in shown] == [
            "▸ ⚑ hook UserPromptSubmit echo noted · allowed",
            "▸ ⚑ hook PreToolUse sh guard.sh · blocked: echo is not allowed here",
        ]
        assert all(closed != -1 for _, closed in shown)  # folded: the details are inside
        text = editor.chat_text()
        assert "user hook from settings" in text and "exit code 2" in text

    check()
    session = editor.lua("return T.session().id")
    editor.cmd("AgentNew")
    editor.wait(f"T.session() ~= nil and T.session().id ~= '{session}'", what="a new session")
    editor.cmd(f"AgentResume {session}")
    editor.wait(f"T.session().id == '{session}' and T.chat_text():find('Blocked, as expected.', 1, true) ~= nil",
                what="the resumed transcript")
    check()
    assert editor.errors() == []


def test_agentsessions_lists_a_subagents_session_under_its_parent(editor: Editor) -> None:
    call = {"name": "subagent", "id": "sa", "arguments": {"description": "count the lines", "task": "TASK: count"}}
    setup(editor, [{"when": "delegate", "tools": [call]}, {"when": "TASK", "text": "3 lines"},
                   {"when": "delegate", "text": "Done."}])
    editor.cmd("AgentAsk delegate this")
    editor.wait_idle()
    parent_id = editor.lua("return T.session().id")
    editor.cmd("AgentNew")  # a newer session: the parent is not the first listed
    editor.wait(f"T.session() ~= nil and T.session().id ~= '{parent_id}'", what="a new session")
    editor.lua("T.stub_select()")
    editor.cmd("AgentSessions")
    editor.wait("_G.test_selects ~= nil and #_G.test_selects == 1", what="the session picker")
    labels = editor.lua("return _G.test_selects[1].labels")
    parent = next(n for n, label in enumerate(labels) if "delegate this" in label)
    assert labels[parent + 1].startswith("  ↳ sub-agent: ") and "count the lines" in labels[parent + 1], labels
    assert sum("↳" in label for label in labels) == 1
