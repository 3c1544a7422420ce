"""A real generic LSP editor with no agent_lsp plugin: Emacs + eglot in
--batch starts the server, runs `agentLsp.followup` through
workspace/executeCommand, and ends with the agent's edit in its buffer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from emacs_batch import BUGGY, EDIT, EMACS, FIXED_LINE, needs_eglot

SUITE_SWITCHES = ("AGENT_LSP_LANGUAGE_SERVERS", "AGENT_LSP_SANDBOXED_COMMANDS")  # tests/conftest.py

HERE = Path(__file__).parent

pytestmark = needs_eglot


def run_eglot(tmp_path: Path, script: list[dict], final_answer: str, extra_settings: dict | None = None,
              prepare: Callable[[Path], None] | None = None, **extra_env: str) -> tuple[Path, str]:
    """Emacs opens stats.py, runs the followup command, waits for the fix in
    its buffer and for the final answer in a window/showMessage. `prepare`
    writes stats.py instead of the buggy version."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    (prepare or (lambda path: path.write_text(BUGGY)))(workspace / "stats.py")
    settings = {"model": {"provider": "scripted", "script": script}, "sessionsDir": str(tmp_path / "sessions"),
                **(extra_settings or {})}
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and (not k.startswith("AGENT_LSP_") or k in SUITE_SWITCHES)}
    env.update(
        HOME=str(tmp_path),  # no user init files, no user agent-lsp config
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        AGENT_LSP_PYTHON=sys.executable,
        AGENT_LSP_WORKSPACE=str(workspace),
        AGENT_LSP_FILE="stats.py",
        AGENT_LSP_SETTINGS=json.dumps(settings),
        AGENT_LSP_PROMPT="mean() is wrong, fix it",
        AGENT_LSP_EXPECT=FIXED_LINE,
        AGENT_LSP_EXPECT_MESSAGE=final_answer,
        AGENT_LSP_TIMEOUT="30",
        **extra_env,
    )
    done = subprocess.run(
        [EMACS, "--batch", "-l", str(HERE / "eglot_followup.el")],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=90,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-4000:]}"
    assert done.stdout.startswith("OK "), done.stdout
    return workspace, done.stdout


def test_eglot_followup_command_edits_the_open_buffer(tmp_path: Path):
    script = [
        {"text": "Reading stats.py.", "tools": [{"name": "read_file", "arguments": {"path": "stats.py"}}]},
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Fixed the divisor of mean()."},
    ]
    run_eglot(tmp_path, script, "Fixed the divisor of mean().")
    # The session the command started was stored like any other.
    assert list((tmp_path / "sessions").rglob("*.jsonl"))


def test_eglot_answers_a_permission_question_in_its_generic_dialog(tmp_path: Path):
    # eglot knows nothing of agent/permission: the server asks with
    # window/showMessageRequest, and the user's "Allow once" lets the command run.
    script = [
        {"text": "Checking first.", "tools": [{"name": "run_command", "arguments": {"command": "echo ok > checked.txt"}}]},
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Checked and fixed."},
    ]
    workspace, report = run_eglot(tmp_path, script, "Checked and fixed.")
    assert "permission questions: 1" in report
    assert (workspace / "checked.txt").read_text() == "ok\n"


def test_eglot_a_command_after_an_edit_reads_the_edited_file(tmp_path: Path):
    # eglot answers workspace/applyEdit before it sends the didChange (it sends
    # changes when idle): the server saves the edited text, not its older copy,
    # so the command that runs next sees the fix on disk.
    script = [
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Checking.", "tools": [{"name": "run_command", "arguments": {"command": "grep -n 'return' stats.py > seen.txt"}}]},
        {"text": "Fixed and checked."},
    ]
    workspace, _ = run_eglot(tmp_path, script, "Fixed and checked.")
    assert (workspace / "seen.txt").read_text() == f"2:    {FIXED_LINE}\n"
    assert (workspace / "stats.py").read_text() == f"def mean(values):\n    {FIXED_LINE}\n"


def test_eglot_an_edit_that_leaves_the_buffer_as_on_disk_writes_nothing(tmp_path: Path):
    # The user's unsaved change is what the agent fixes back: the buffer then holds
    # exactly the file on disk, and the server (eglot saves nothing itself) leaves
    # the file alone, so nothing watching it sees a change.
    workspace = tmp_path / "project"
    fixed = f"def mean(values):\n    {FIXED_LINE}\n"
    script = [{"text": "Fixing it.", "tools": [EDIT]}, {"text": "Fixed it back."}]
    stamp = 1_000_000_000

    def prepared(path: Path) -> None:
        path.write_text(fixed)
        os.utime(path, (stamp, stamp))

    run_eglot(tmp_path, script, "Fixed it back.", AGENT_LSP_TYPE_FIRST=BUGGY, prepare=prepared)
    assert (workspace / "stats.py").read_text() == fixed
    assert (workspace / "stats.py").stat().st_mtime == stamp


def test_eglot_an_always_confirmed_command_offers_only_once_and_deny(tmp_path: Path):
    # The server asks about `rm -rf` every time: the generic dialog offers only
    # the answers it honours, and its text says why and what the choices are.
    script = [
        {"text": "Cleaning.", "tools": [{"name": "run_command", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Cleaned and fixed."},
    ]
    questions = tmp_path / "questions.jsonl"
    run_eglot(tmp_path, script, "Cleaned and fixed.", AGENT_LSP_QUESTIONS_OUT=str(questions))
    (asked,) = [json.loads(line) for line in questions.read_text().splitlines()]
    assert asked["actions"] == ["Deny", "Allow once"]  # the preselected first one denies
    assert "rm -rf build" in asked["message"]
    assert "Always confirmed: this command is a recursive delete" in asked["message"]
    assert "Answer: Deny / Allow once" in asked["message"]


def test_eglot_fix_with_agent_is_offered_where_no_diagnostic_is(tmp_path: Path):
    # eglot sends only agent_lsp's own diagnostics (none) with its code action
    # request: "Fix with agent" is offered anyway, for the line of the cursor.
    script = [
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Fixed the divisor."},
    ]
    workspace, _ = run_eglot(tmp_path, script, "Fixed the divisor.", AGENT_LSP_CODE_ACTION="Fix with agent")
    (session,) = (tmp_path / "sessions").rglob("*.jsonl")
    first = next(json.loads(line) for line in session.read_text().splitlines() if '"user/message"' in line)
    context = json.dumps(first["data"]["message"])
    assert "Find the problem in this code and fix it." in context
    assert "return sum(values) / (len(values) - 1)" in context  # the cursor's line went with it


def test_eglot_gets_the_conversation_as_log_lines_and_no_custom_notifications(tmp_path: Path):
    # eglot never declared it renders agent_lsp's events: it gets none of them,
    # and the conversation comes as window/logMessage lines it shows in its events buffer.
    script = [
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Fixed the divisor of mean()."},
    ]
    log = tmp_path / "log.txt"
    _, report = run_eglot(tmp_path, script, "Fixed the divisor of mean().", AGENT_LSP_LOG_OUT=str(log))
    assert "session/event: 0," in report
    lines = log.read_text(encoding="utf-8").splitlines()
    conversation = lines[lines.index("You: mean() is wrong, fix it"):]
    assert conversation == [
        "You: mean() is wrong, fix it",
        "Agent: Fixing it.",
        "→ edit_file stats.py " + json.dumps(EDIT["arguments"]["edits"]),
        "  ✓ edit_file",
        "Agent: Fixed the divisor of mean().",
        "— turn 1 completed",
    ]


def test_eglot_undoes_a_pending_agent_change_with_a_code_action(tmp_path: Path):
    # edits.review = "review": the edit lands in the buffer but not on disk, and the
    # hunk is a code action "Undo agent change" that puts the old line back.
    script = [
        {"text": "Fixing it.", "tools": [EDIT]},
        {"text": "Fixed, waiting for your review."},
    ]
    workspace, _ = run_eglot(
        tmp_path, script, "Fixed, waiting for your review.", extra_settings={"edits": {"review": "review"}},
        AGENT_LSP_DISK_BEFORE_ACTION=BUGGY, AGENT_LSP_THEN_ACTION="Undo agent change",
        AGENT_LSP_THEN_EXPECT="return sum(values) / (len(values) - 1)",
    )
    (session,) = (tmp_path / "sessions").rglob("*.jsonl")
    kinds = [json.loads(line)["type"] for line in session.read_text().splitlines()[1:]]
    assert "review/pending" in kinds and "review/resolve" in kinds
    assert (workspace / "stats.py").read_text() == BUGGY
