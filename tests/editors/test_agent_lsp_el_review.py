"""editors/emacs/agent-lsp.el in a real Emacs (batch): the agent's changes held
for review are drawn in their buffers (the lines they replaced shown above
them) and kept or undone there or from the review list, on the buffer's
unsaved text; each project has its own agent and chat; a user who looked
away is told when a question waits or a turn ends."""

from __future__ import annotations

from pathlib import Path

from emacs_batch import needs_eglot
from test_agent_lsp_el import ALLOW_COMMANDS, run_package, session_events

pytestmark = needs_eglot

TWO = ("def mean(values):\n    return sum(values) / (len(values) - 1)\n\n\n"
       "def total(values):\n    return sum(values) + 1\n")
FIX_BOTH = {"name": "edit_file", "arguments": {"path": "stats.py", "edits": [
    {"oldText": "return sum(values) / (len(values) - 1)", "newText": "return sum(values) / len(values)"},
    {"oldText": "return sum(values) + 1", "newText": "return sum(values)"}]}}
FIXED = ("def mean(values):\n    return sum(values) / len(values)\n\n\n"
         "def total(values):\n    return sum(values)\n")
REVIEW = {"edits": {"review": "review"}}


def test_a_change_is_kept_at_point_and_the_rest_from_the_list_then_the_file_is_saved(tmp_path: Path):
    agent, report = run_package(tmp_path, [{"text": "Fixing both.", "tools": [FIX_BOTH]}, {"text": "Fixed."}], [
        ["ask", "fix mean and total"],
        ["wait", "— turn 1 completed"],
        # the replaced line is drawn above the agent's, not written in the text
        ["wait-drawn", "return sum(values) / (len(values) - 1)"],
        ["review"],
        ["wait-buffer", "*agent review: project*", "2 changes of the agent wait for review"],
        ["wait-buffer", "*agent review: project*", "-    return sum(values) + 1"],
        ["review-at", 2, "keep"],
        ["wait-buffer", "*agent review: project*", "1 change of the agent waits for review"],
        ["review-list", "stats.py:6", "K"],
        ["wait-buffer", "*agent review: project*", "No change of the agent waits for review."],
    ], files={"stats.py": TWO}, settings=REVIEW)
    # Kept, none pending: saved, so the next command sees it.
    assert (tmp_path / "project" / "stats.py").read_text() == FIXED
    kept = [e["data"] for e in session_events(tmp_path) if e.get("type") == "review/resolve"]
    assert [k["action"] for k in kept] == ["keep", "keep"], kept


def test_an_undo_finds_the_change_below_the_users_unsaved_line_and_the_model_is_told(tmp_path: Path):
    # The user adds a line above the changes without saving: the server sees the
    # buffer's text, so the undo lands on the agent's line (now line 3), not on line 2.
    script = [{"when": "fix", "text": "Fixing both.", "tools": [FIX_BOTH]}, {"when": "fix", "text": "Fixed."},
              {"when": "thanks", "text": "Noted."}]
    agent, report = run_package(tmp_path, script, [
        ["ask", "fix mean and total"],
        ["wait", "— turn 1 completed"],
        ["type-at", "stats.py", 1, "# mine\n"],
        ["review-at", 3, "undo"],
        ["wait-file", "# mine\ndef mean(values):\n    return sum(values) / (len(values) - 1)\n"],
        # what the model is told waits for its next step: not something the user queued
        ["queue"], ["wait-buffer", "*agent queue: project*", "Nothing is queued."],
        ["ask", "thanks"],
        ["wait", "— turn 2 completed"],
    ], files={"stats.py": TWO}, settings=REVIEW)
    workspace = tmp_path / "project"
    assert (workspace / "stats.py").read_text() == TWO  # the total fix still waits; nothing saved
    assert "↶ you undid a change in stats.py" in agent.splitlines(), agent
    told = [e["data"]["message"] for e in session_events(tmp_path) if e.get("type") == "user/message"
            and e["data"]["message"].get("source") == "review"]
    assert len(told) == 1 and "The user rejected this change of yours" in told[0]["content"][0]["text"]
    assert "-    return sum(values) / (len(values) - 1)" in told[0]["content"][0]["text"]
    pending = [e["data"] for e in session_events(tmp_path) if e.get("type") == "review/resolve"]
    assert [(p["action"], len(p["hunks"])) for p in pending] == [("undo", 1)]


def test_each_project_has_its_own_agent_and_chat(tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.py").write_text("x = 1\n")
    script = [{"when": "alpha", "text": "A."}, {"when": "bravo", "text": "B."}]
    run_package(tmp_path, script, [
        ["ask", "alpha"], ["wait", "— turn 1 completed"],
        ["visit", str(other / "notes.py")],
        ["ask", "bravo"], ["wait", "— turn 1 completed"],
    ])
    chats = (tmp_path / "agent.txt.all").read_text().split("=== ")[1:]
    by_name = {chat.split("\n", 1)[0]: chat for chat in chats}
    assert set(by_name) == {"*agent: project*", "*agent: other*"}, list(by_name)
    assert "You: alpha" in by_name["*agent: project*"] and "bravo" not in by_name["*agent: project*"]
    assert "You: bravo" in by_name["*agent: other*"] and "alpha" not in by_name["*agent: other*"]
    sessions = sorted((tmp_path / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 2


def test_a_user_who_looked_away_is_told_of_a_question_and_of_the_turns_end(tmp_path: Path):
    script = [{"text": "Touching.", "tools": [{"name": "run_command", "arguments": {"command": "touch x"}}]},
              {"text": "Not allowed."}]
    _, report = run_package(tmp_path, script, [
        ["away"],
        ["keys", ["d", 0.7]],
        ["ask", "touch a file"],
        ["wait", "— turn 1 completed"],
    ])
    assert 'attention: ("the agent\'s turn completed (*agent: project*)" "the agent asks: Run `touch x`' in report, report


def test_nobody_is_told_while_the_user_looks_at_emacs(tmp_path: Path):
    _, report = run_package(tmp_path, [{"text": "Hi."}], [["ask", "hello"], ["wait", "— turn 1 completed"]],
                            permissions=ALLOW_COMMANDS)
    assert "attention: nil" in report, report
