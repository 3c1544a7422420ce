"""`agent-lsp run "PROMPT"` as a subprocess: the real server behind it, the
scripted model, edits landing on disk, text streamed to stdout, the session
stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

FIX_SCRIPT = [
    {"text": "Reading stats.py.", "tools": [{"name": "read_file", "arguments": {"path": "stats.py"}}]},
    {
        "text": "The divisor is off by one.",
        "tools": [{
            "name": "edit_file",
            "arguments": {"path": "stats.py", "edits": [{
                "oldText": "return sum(values) / (len(values) - 1)",
                "newText": "return sum(values) / len(values)",
            }]},
        }],
    },
    {"text": "Fixed mean()."},
]


def _session_id(stderr: str) -> str:
    match = re.search(r"session (s_\S+)", stderr)
    assert match, stderr
    return match.group(1)


def test_run_applies_the_agents_edit_to_disk(tmp_path: Path, workspace: Path):
    settings = json.dumps({"model": {"provider": "scripted", "script": FIX_SCRIPT}})
    done = agent_lsp(["run", "fix mean()", "--workspace", str(workspace), "--settings", settings],
                     clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    text = (workspace / "stats.py").read_text()
    assert "return sum(values) / len(values)" in text
    assert "len(values) - 1" not in text
    lines = done.stdout.splitlines()
    assert lines[0] == "Reading stats.py."
    assert "-> read_file stats.py" in lines or "→ read_file stats.py" in lines
    assert any("applied edit to stats.py" in line for line in lines)
    assert lines[-1] == "Fixed mean()."


def test_run_without_a_model_answers_and_stores_the_session(tmp_path: Path, workspace: Path):
    # The prompt comes from stdin ("-"); the workspace is the current directory.
    env = clean_env(tmp_path)
    done = agent_lsp(["run", "-"], env, cwd=workspace, input="hello there\n")
    assert done.returncode == 0, done.stderr
    assert "(scripted model) You said: hello there" in done.stdout
    session_id = _session_id(done.stderr)
    # The default store: <data dir>/agent-lsp/sessions/<folder key>/<id>.jsonl
    stored = list((tmp_path / "data" / "agent-lsp" / "sessions").rglob(f"{session_id}.jsonl"))
    assert len(stored) == 1
    records = [json.loads(line) for line in stored[0].read_text().splitlines()]
    assert any(r.get("type") == "turn/end" for r in records)


def test_run_and_chat_continue_a_session(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    first = agent_lsp(["run", "first message", "-w", str(workspace)], env)
    session_id = _session_id(first.stderr)
    second = agent_lsp(["run", "second message", "-w", str(workspace), "--session", session_id], env)
    assert second.returncode == 0, second.stderr
    assert "You said: second message" in second.stdout
    assert "first message" not in second.stdout  # only the new turn is printed, not a replay
    assert _session_id(second.stderr) == session_id
    (stored,) = (tmp_path / "sessions").rglob(f"{session_id}.jsonl")
    turn_ends = [line for line in stored.read_text().splitlines() if '"turn/end"' in line]
    assert len(turn_ends) == 2

    # `chat --session` shows the conversation so far, then goes on with it.
    chat = agent_lsp(["chat", "-w", str(workspace), "--session", session_id], env, input="third message\n/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.index("> first message") < chat.stdout.index("> second message")
    assert chat.stdout.rstrip().endswith("(scripted model) You said: third message")


def test_unknown_session_is_reported(tmp_path: Path, workspace: Path):
    done = agent_lsp(["run", "hi", "-w", str(workspace), "--session", "s_nope"], clean_env(tmp_path))
    assert done.returncode == 1
    assert "s_nope" in done.stderr


def test_empty_prompt_is_a_usage_error(tmp_path: Path, workspace: Path):
    done = agent_lsp(["run", "  ", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 2
    assert "empty" in done.stderr


def test_verbose_server_logging_does_not_stall_the_session(tmp_path: Path, workspace: Path):
    # At debug level the server logs every message it sends (about 600 KB
    # here, ten times a pipe's buffer): the client must keep draining the
    # server's stderr or the server blocks on a log write.
    long_text = "word " * 6000
    settings = json.dumps({"model": {"provider": "scripted", "script": [{"text": long_text}]}})
    log_file = tmp_path / "agent.log"
    done = agent_lsp(["run", "talk", "-w", str(workspace), "--settings", settings,
                      "--log-level", "debug", "--log-file", str(log_file)], clean_env(tmp_path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == long_text.strip()
    assert log_file.stat().st_size > 300_000


def test_timeout_cancels_a_turn_that_does_not_finish(tmp_path: Path, workspace: Path):
    settings = json.dumps({"model": {"provider": "scripted", "script": [{"hang": "working on it"}]}})
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    done = agent_lsp(["run", "never ends", "-w", str(workspace), "--settings", settings, "--timeout", "1"], env)
    assert done.returncode == 1
    assert "working on it" in done.stdout
    assert "did not finish within 1 s" in done.stderr
    # The turn was cancelled, not left running: the log ends it as aborted.
    (stored,) = (tmp_path / "sessions").rglob("*.jsonl")
    assert '"kind":"aborted"' in stored.read_text().replace(" ", "")


def test_run_ends_with_the_model_and_its_token_use(tmp_path: Path, workspace: Path):
    done = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    closing = done.stderr.strip().splitlines()[-2:]
    assert re.fullmatch(r"model scripted · \d+ input \+ \d+ output tokens", closing[0]), closing
    assert closing[1].startswith("session s_")


def test_run_session_from_a_subfolder_finds_the_workspace(tmp_path: Path, workspace: Path):
    env = clean_env(tmp_path, AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
    first = agent_lsp(["run", "first message"], env, cwd=workspace)
    session_id = _session_id(first.stderr)
    sub = workspace / "src" / "deep"
    sub.mkdir(parents=True)
    second = agent_lsp(["run", "second message", "--session", session_id], env, cwd=sub)
    assert second.returncode == 0, second.stderr
    assert _session_id(second.stderr) == session_id
    (stored,) = (tmp_path / "sessions").rglob(f"{session_id}.jsonl")
    assert "second message" in stored.read_text()


def test_unknown_session_says_where_sessions_belong(tmp_path: Path, workspace: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = agent_lsp(["run", "hi", "--session", "s_nope"], clean_env(tmp_path), cwd=elsewhere)
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if "s_nope" in line]
    assert str(elsewhere) in line and "--workspace" in line


def test_run_honours_agent_lsp_log_level(tmp_path: Path, workspace: Path):
    quiet = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path))
    verbose = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path, AGENT_LSP_LOG_LEVEL="info"))
    assert verbose.returncode == 0, verbose.stderr
    assert " INFO agent_lsp" not in quiet.stderr
    assert " INFO agent_lsp.llm.factory: model: scripted model" in verbose.stderr  # the server's log, shown
    bad = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path, AGENT_LSP_LOG_LEVEL="loud"))
    assert bad.returncode == 2  # like any setting that cannot apply
    assert bad.stderr.strip() == ("agent-lsp run: environment: setting logLevel = 'loud': must be one of "
                                  "'debug', 'info', 'warning' or 'error' (kept the previous value)")


def test_run_shows_the_problem_an_edit_added_from_a_real_language_server(tmp_path: Path, workspace: Path):
    script = [{"tools": [{"name": "edit_file", "arguments": {"path": "stats.py", "edits": [{
        "oldText": "return sum(values) / (len(values) - 1)", "newText": "return sum(valuez) / len(values)"}]}}]},
        {"text": "Done."}]
    settings = json.dumps({"model": {"provider": "scripted", "script": script},
                           "language": {"enabled": True, "waitSeconds": 20},
                           "languageServers": {"ruff": {"enabled": False}}})
    done = agent_lsp(["run", "fix mean()", "--workspace", str(workspace), "--settings", settings],
                     clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    problem = [line for line in done.stdout.splitlines() if line.startswith("  ! stats.py:")]
    assert problem and '"valuez" is not defined' in problem[0], done.stdout
