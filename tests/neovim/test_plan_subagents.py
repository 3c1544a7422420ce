"""Plan mode and sub-agents in the Neovim chat, against the real server:
:AgentPlan refuses the agent's edit and the plan shows as a checklist; a
sub-agent is a card with its status, and :AgentSubagent opens its transcript."""

from __future__ import annotations

from nvim_harness import Editor


def test_plan_mode_refuses_the_edit_and_shows_the_plan_as_a_checklist(editor: Editor) -> None:
    edit = {"name": "edit_file", "id": "e1", "arguments": {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}}
    plan = {"name": "todo_write", "id": "p1", "arguments": {"items": [
        {"content": "read a.py", "status": "completed"}, {"content": "set x to 2", "status": "pending"}]}}
    editor.setup([{"when": "plan it", "tools": [edit, plan]}, {"when": "plan it", "text": "Planned."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentNew")
    editor.wait("T.session() ~= nil", what="a session")
    editor.cmd("AgentPlan on")
    editor.wait("require('agent_lsp.plan').mode_of(T.session()) == 'plan'", what="plan mode")
    editor.cmd("AgentAsk plan it")
    editor.wait_idle()
    text = editor.chat_text()
    assert "_⏸ plan mode: the agent reads and plans, edits and commands are refused_" in text
    assert "▸ ✗ edit_file a.py · denied" in text
    assert "**Plan** (1/2 done)\n- [x] read a.py\n- [ ] set x to 2" in text
    assert (editor.workspace / "a.py").read_text() == "x = 1\nprint(x)\n"
    winbar = editor.lua("return require('agent_lsp.chat').winbar_text(T.session())")
    assert "plan mode" in winbar
    editor.cmd("AgentPlan")  # toggles it off
    editor.wait("require('agent_lsp.plan').mode_of(T.session()) == 'default'", what="plan mode off")
    assert "_▶ plan mode off: the plan goes to the agent with your next message_" in editor.chat_text()
    assert editor.errors() == []


def test_a_subagent_is_a_card_whose_transcript_opens(editor: Editor) -> None:
    call = {"name": "subagent", "id": "sa", "arguments": {"description": "count the lines", "task": "TASK: count notes.txt"}}
    editor.setup([{"when": "delegate", "tools": [call]},
                  {"when": "TASK", "text": "notes.txt has 3 lines"},
                  {"when": "delegate", "text": "The sub-agent says 3."}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk delegate this")
    editor.wait_idle()
    lines = editor.chat_lines()
    header = next(n for n, line in enumerate(lines) if "subagent count the lines" in line)
    assert lines[header] == "▸ ✓ subagent count the lines · sub-agent completed · :AgentSubagent"
    assert "notes.txt has 3 lines" in "\n".join(lines[header:])
    parent = editor.lua("return T.session().id")
    editor.cmd("AgentSubagent")
    editor.wait(f"T.session() ~= nil and T.session().id ~= '{parent}'", what="the sub-agent's transcript")
    editor.wait("T.chat_text():find('notes.txt has 3 lines', 1, true) ~= nil", what="its answer")
    child_text = editor.chat_text()
    assert child_text.startswith("## You\n\nTASK: count notes.txt\n\n## Agent"), child_text
    assert "The sub-agent says 3." not in child_text
    assert editor.errors() == []
