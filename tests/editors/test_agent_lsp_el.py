"""editors/emacs/agent-lsp.el in a real Emacs (batch) with eglot: its own
connection opts in to the agent's events, which stream into the *agent*
buffer; ask, steer, cancel and "ask about the selection" are its commands;
the agent's language questions are answered by the server eglot runs for the
buffer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emacs_batch import BUGGY, EDIT, EMACS, FIXED_LINE, needs_eglot

SUITE_SWITCHES = ("AGENT_LSP_LANGUAGE_SERVERS", "AGENT_LSP_SANDBOXED_COMMANDS")  # tests/conftest.py

HERE = Path(__file__).parent
PACKAGE = HERE.parents[1] / "editors" / "emacs" / "agent-lsp.el"
BASEDPYRIGHT = Path(sys.executable).parent / "basedpyright-langserver"

BREAK = {"name": "edit_file", "arguments": {"path": "greet.py", "edits": [
    {"oldText": 'return "hi " + name', "newText": 'return "hi " + nme'}]}}
RENAME = {"name": "language", "arguments": {"operation": "rename", "path": "greet.py", "line": 1,
                                             "symbol": "greet", "newName": "welcome"}}
DEFINITION = {"name": "language", "arguments": {"operation": "definition", "path": "main.py", "line": 3,
                                                 "symbol": "greet"}}

ALLOW_COMMANDS = {"rules": [{"tool": "run_command", "action": "allow"}]}

pytestmark = needs_eglot


def run_package(tmp_path: Path, script: list[dict], steps: list[list], permissions: dict | None = None,
                files: dict[str, str] | None = None, settings: dict | None = None,
                workspace: Path | None = None) -> tuple[str, str]:
    """Emacs loads the package, opens the first of `files` (default: the
    buggy stats.py) in `workspace` (default: a new one, tmp_path/project) and
    plays `steps`; returns the chat buffer's text and the driver's report."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    workspace = workspace or tmp_path / "project"
    workspace.mkdir(exist_ok=True)
    files = files or {"stats.py": BUGGY}
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    settings = {"model": {"provider": "scripted", "script": script}, "sessionsDir": str(tmp_path / "sessions"),
                **(settings or {})}
    if permissions:
        settings["permissions"] = permissions
    out = tmp_path / "agent.txt"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and (not k.startswith("AGENT_LSP_") or k in SUITE_SWITCHES)}
    env.update(
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        AGENT_LSP_PACKAGE=str(PACKAGE),
        AGENT_LSP_PYTHON=sys.executable,
        AGENT_LSP_WORKSPACE=str(workspace),
        AGENT_LSP_FILE=next(iter(files)),
        AGENT_LSP_SETTINGS=json.dumps(settings),
        AGENT_LSP_STEPS=json.dumps(steps),
        AGENT_LSP_OUT=str(out),
    )
    done = subprocess.run([EMACS, "--batch", "-l", str(HERE / "agent_lsp_el_driver.el")],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-4000:]}"
    return out.read_text(encoding="utf-8"), done.stdout


def session_events(tmp_path: Path) -> list[dict]:
    (session,) = (tmp_path / "sessions").rglob("*.jsonl")
    return [json.loads(line) for line in session.read_text().splitlines()]


def first_user_message(tmp_path: Path) -> dict:
    events = session_events(tmp_path)
    return next(e["data"]["message"] for e in events if e.get("type") == "user/message"
                and e["data"]["message"].get("source") != "runtime-context")


def test_ask_streams_the_conversation_into_the_agent_buffer(tmp_path: Path):
    script = [
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Fixed the divisor of mean()."},
    ]
    agent, report = run_package(tmp_path, script, [
        ["ask", "mean() is wrong, fix it"],
        ["wait", "— turn 1 completed"],
        ["wait-file", FIXED_LINE],
    ])
    lines = agent.splitlines()
    assert lines[2].startswith("→ edit_file stats.py [{")  # the call's arguments, on one line
    assert lines[:2] + lines[3:6] == [
        "You: mean() is wrong, fix it",
        "Agent: Fixing it.",
        "  ✓ edit_file",
        "Agent: Fixed the divisor of mean().",
        "— turn 1 completed",
    ]
    # The events are rendered here: the answer does not also pop up as a message.
    assert "window/showMessage: nil" in report


def test_a_command_that_exits_non_zero_is_a_cross(tmp_path: Path):
    script = [
        {"text": "Running the tests.", "tools": [{"name": "run_command", "arguments": {"command": "exit 3"}}]},
        {"text": "They fail."},
    ]
    agent, _ = run_package(tmp_path, script, [["ask", "run the tests"], ["wait", "— turn 1 completed"]],
                           permissions=ALLOW_COMMANDS)
    assert "  ✗ run_command · exit 3" in agent.splitlines()


def test_an_edit_is_on_disk_before_the_next_tool_runs_unless_the_buffer_has_the_users_changes(tmp_path: Path):
    # stats.py is visited and clean: the agent's edit is saved before its
    # command reads the file. notes.py holds the user's unsaved line: the edit
    # lands in the buffer, the file stays as it was, and the model is told.
    note = {"name": "edit_file", "arguments": {"path": "notes.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}}
    script = [
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Checking.", "tools": [{"name": "run_command", "arguments": {"command": "cat stats.py"}},
                                        {"name": "read_file", "arguments": {"path": "stats.py"}}]},
        {"text": "Noting.", "tools": [note]},
        {"text": "Elsewhere.", "tools": [{"name": "edit_file", "arguments": {
            "path": "other.py", "edits": [{"oldText": "y = 1", "newText": "y = 3"}]}}]},
        {"text": "Done."},
    ]
    _, report = run_package(tmp_path, script, [
        ["type", "notes.py", "# mine\n"],
        ["ask", "mean() is wrong, fix it"],
        ["wait", "— turn 1 completed"],
    ], files={"stats.py": BUGGY, "notes.py": "x = 1\n", "other.py": "y = 1\n"}, permissions=ALLOW_COMMANDS)
    edited, command, read, noted, elsewhere = tool_results(tmp_path)
    assert FIXED_LINE in command and FIXED_LINE in read, (command, read)
    assert "left unsaved" not in edited
    assert ("notes.py: left unsaved in the editor because it has the user's unsaved changes; "
            "the file on disk is unchanged") in noted, noted
    workspace = tmp_path / "project"
    assert (workspace / "notes.py").read_text() == "x = 1\n"
    assert FIXED_LINE in (workspace / "stats.py").read_text()
    # A file no buffer visits is edited and saved without a y/n question.
    assert (workspace / "other.py").read_text() == "y = 3\n" and "left unsaved" not in elsewhere
    assert "Server wants to edit" not in report, report


def test_a_key_pressed_as_the_permission_question_appears_answers_nothing(tmp_path: Path):
    # The user presses "a" and RET just as the question appears (typing for
    # something else): nothing runs. Read, then "d": the agent is denied.
    script = [{"text": "Touching.", "tools": [{"name": "run_command",
                                              "arguments": {"command": "touch created-by-agent.txt"}}]},
              {"text": "Not allowed."}]
    agent, report = run_package(tmp_path, script, [
        ["keys", ["a", 0], ["\r", 0], ["d", 0.7]],
        ["ask", "touch a file"],
        ["wait", "— turn 1 completed"],
    ])
    assert not (tmp_path / "project" / "created-by-agent.txt").exists()
    assert "✗ run_command" in agent
    assert "? Run `touch created-by-agent.txt`" in agent and "  deny" in agent.splitlines()
    # The question offered its keys, and none of them is a default.
    assert "[a] allow once" in report and "[d] deny" in report, report


def test_a_skill_shows_as_its_name_while_the_model_reads_its_instructions(tmp_path: Path):
    agent, _ = run_package(tmp_path, [{"text": "Hello, Bob!"}], [
        ["skill", "greet", "for Bob"],
        ["wait", "— turn 1 completed"],
    ], files={"stats.py": BUGGY,
              ".agents/skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets\n---\nSay hello by name.\n"})
    assert "You: /greet for Bob" in agent.splitlines() and "Say hello by name." not in agent, agent
    assert "Say hello by name." in "".join(b["text"] for b in first_user_message(tmp_path)["content"])


def test_sessions_the_queue_and_mcp_status(tmp_path: Path):
    # Two sessions: the first is resumed and goes on; a message sent while a
    # turn runs waits in the queue; the MCP servers are listed with their state.
    script = [{"when": "alpha", "text": "A."}, {"when": "bravo", "text": "B."}, {"when": "charlie", "text": "C."},
              {"when": "delta", "tools": [{"name": "run_command", "arguments": {"command": "sleep 60"}}]},
              {"when": "delta", "text": "never reached"}, {"when": "echo", "text": "E."}]
    agent, _ = run_package(tmp_path, script, [
        ["ask", "alpha"], ["wait", "— turn 1 completed"],
        ["ask", "bravo"], ["wait", "— turn 2 completed"],
        ["new-session"],
        ["ask", "charlie"], ["wait", "— turn 1 completed"],
        ["resume", "2 turns"],
        ["wait", "You: bravo"],
        ["ask", "delta"], ["wait", "→ run_command sleep 60"],
        ["ask", "echo"],
        ["wait-queued", "- echo"],
        ["queue-remove", "echo"], ["wait-buffer", "*agent queue: project*", "Nothing is queued"],
        ["cancel"], ["wait", "— turn 3 aborted"],
        ["wait-mcp", "broken  failed"],  # until the server's start has failed
    ], permissions=ALLOW_COMMANDS, settings={"mcpServers": {"broken": {"command": "false"}}})
    lines = agent.splitlines()
    assert "You: alpha" in lines and "You: delta" in lines
    assert "You: charlie" not in lines  # the other session's
    assert "Agent: E." not in lines  # removed from the queue before it ran
    sessions = [p.read_text() for p in (tmp_path / "sessions").rglob("*.jsonl")]
    assert len(sessions) == 2
    assert sum('"delta"' in text and '"alpha"' in text for text in sessions) == 1


def test_steer_reaches_the_running_turn_and_cancel_stops_it(tmp_path: Path):
    script = [
        {"text": "Waiting.", "tools": [{"name": "run_command", "arguments": {"command": "sleep 3"}}]},
        {"text": "Waiting longer.", "tools": [{"name": "run_command", "arguments": {"command": "sleep 60"}}]},
        {"text": "never reached"},
    ]
    agent, _ = run_package(tmp_path, script, [
        ["ask", "wait for me"],
        ["wait", "→ run_command sleep 3"],
        ["steer", "and keep it short"],
        ["wait", "You (steering): and keep it short"],
        ["wait", "→ run_command sleep 60"],
        ["cancel"],
        ["wait", "— turn 1 aborted"],
    ], permissions=ALLOW_COMMANDS)
    assert "never reached" not in agent


def test_ask_about_selection_sends_the_question_and_the_code_readably(tmp_path: Path):
    script = [{"text": "It divides by one less than the count."}]
    agent, _ = run_package(tmp_path, script, [
        ["ask-selection", 2, "why is the result too big?"],
        ["wait", "— turn 1 completed"],
    ])
    assert "You: why is the result too big?" in agent.splitlines()
    message = first_user_message(tmp_path)
    assert message["content"][0] == {"type": "text", "text": "why is the result too big?"}
    (context,) = message["context"]
    assert context["kind"] == "selection" and context["range"]["start"] == {"line": 1, "character": 0}
    # The model reads the selection as code with its place, not as a JSON object.
    seen = message["content"][1]["text"]
    assert "stats.py, line 2" in seen
    assert "```\n    return sum(values) / (len(values) - 1)\n```" in seen
    assert '"uri"' not in seen


def tool_results(tmp_path: Path) -> list[str]:
    return ["".join(block.get("text", "") for block in e["data"]["message"]["content"])
            for e in session_events(tmp_path) if e.get("type") == "tool/result"]


def test_the_agent_asks_the_language_server_eglot_runs_for_the_buffer(tmp_path: Path):
    # basedpyright is the buffer's own eglot server (for python-mode); agent-lsp
    # runs beside it and has no language server of its own here, so the
    # problems an edit added and a rename can only come from Emacs.
    if not BASEDPYRIGHT.exists():
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    script = [{"when": "break it", "tools": [BREAK]}, {"when": "break it", "text": "Broken."},
              {"when": "where is it", "tools": [DEFINITION]}, {"when": "where is it", "text": "There."},
              {"when": "rename it", "tools": [RENAME]}, {"when": "rename it", "text": "Renamed."}]
    _, report = run_package(tmp_path, script, [
        ["start-server", str(BASEDPYRIGHT), "--stdio"],
        ["wait-reported"],
        ["ask", "break it"],
        ["wait", "— turn 1 completed"],
        ["ask", "where is it"],
        ["wait", "— turn 2 completed"],
        ["ask", "rename it"],
        ["wait", "— turn 3 completed"],
        ["wait-file", "def welcome("],
        ["wait-visited", "main.py", "from greet import welcome"],
    ], files={"greet.py": 'def greet(name: str) -> str:\n    return "hi " + name\n',
              "main.py": 'from greet import greet\n\nprint(greet("bob"))\n',
              "pyrightconfig.json": '{"typeCheckingMode": "standard"}\n'},
        settings={"language": {"enabled": True, "discovery": False, "waitSeconds": 15}})
    broken, found, renamed = tool_results(tmp_path)
    assert "Problems after this change (basedpyright): 1 new error" in broken, broken
    assert 'greet.py:2:20: error: "nme" is not defined' in broken
    assert "Applied rename to welcome" in renamed and "in 2 files" in renamed, renamed
    # The edit of the first turn, then the rename of both files as one edit.
    assert "workspace/applyEdit: 2" in report, report
    assert "greet.py:1:5: def greet(name: str) -> str:" in found, found  # main.py was not open


def test_a_buffer_with_no_language_server_is_answered_as_such(tmp_path: Path):
    # No eglot server runs for stats.py: Emacs says it has none (rather than
    # an error or a hang), and the model reads that plainly.
    where = {"name": "language", "arguments": {"operation": "definition", "path": "stats.py", "line": 2,
                                               "symbol": "values"}}
    script = [{"text": "Looking.", "tools": [where]}, {"text": "No server."}]
    run_package(tmp_path, script, [["ask", "where is values defined?"], ["wait", "— turn 1 completed"]],
                settings={"language": {"enabled": True, "discovery": False, "waitSeconds": 15}})
    (answer,) = tool_results(tmp_path)
    assert "the editor has no language server for .py files" in answer, answer


def test_the_package_byte_compiles_without_warnings(tmp_path: Path):
    for source in PACKAGE.parent.glob("*.el"):
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run(
        [EMACS, "--batch", "--eval",
         f"(progn (package-initialize) (setq byte-compile-error-on-warn t) (push {json.dumps(str(tmp_path))} load-path))",
         "-f", "batch-byte-compile", *sorted(str(p) for p in tmp_path.glob("*.el"))],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "agent-lsp.elc").exists() and (tmp_path / "agent-lsp-language.elc").exists()
