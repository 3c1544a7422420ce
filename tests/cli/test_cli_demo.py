"""`agent-lsp demo`, the README's main job, as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cli_helpers import agent_lsp, clean_env


def test_demo_fixes_the_sample_project_and_shows_it(tmp_path: Path):
    demo_dir = tmp_path / "demo"
    done = agent_lsp(["demo", "--dir", str(demo_dir)], clean_env(tmp_path), timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # With no model configured the built-in scripted model plays the demo, and says so.
    assert "built-in scripted model" in out

    # The agent's edit went through workspace/applyEdit to the copy on disk.
    fixed = (demo_dir / "workspace" / "stats.py").read_text()
    assert "    return sum(values) / len(values)\n" in fixed
    assert "len(values) - 1" not in fixed
    # ... and the packaged original is untouched.
    original = Path(__file__).parents[2] / "agent_lsp" / "cli" / "demo_workspace" / "stats.py"
    assert "len(values) - 1" in original.read_text()

    # Streamed text, tool calls and the applied edit, in the order they happened.
    order = [
        "Let me read stats.py first.",
        "read_file stats.py",
        "Fixing the divisor.",
        "edit_file stats.py (1 edit)",
        "applied edit to stats.py",
        "mean([1, 2, 3, 4]) returns 2.5",
        "-    return sum(values) / (len(values) - 1)",
        "+    return sum(values) / len(values)",
        "Session log",
    ]
    positions = [out.find(marker) for marker in order]
    assert -1 not in positions, out
    assert positions == sorted(positions), out

    # The session log it names exists and holds the session's events.
    (log_line,) = [line for line in out.splitlines() if line.startswith("Session log")]
    log_path = Path(log_line.rsplit(": ", 1)[1])
    assert log_path.is_file() and log_path.is_relative_to(demo_dir)
    assert '"turn/end"' in log_path.read_text()



def test_demo_runs_leave_nothing_in_tmpdir_and_the_hint_runs(tmp_path: Path):
    """Without --dir the demo keeps one folder in the user's cache, emptied at
    each run; its closing hint is a command that works where the demo was run
    from, here a venv's bin folder that is not on PATH."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    command = bin_dir / "agent-lsp"
    command.write_text(f"#!{sys.executable}\nimport sys\nfrom agent_lsp.cli.main import main\nsys.exit(main())\n")
    command.chmod(0o755)
    env = clean_env(tmp_path, TMPDIR=str(tmpdir), PATH=os.defpath)
    runs = [subprocess.run([command, "demo"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
            for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stdout + done.stderr
    assert list(tmpdir.iterdir()) == []
    demo_folder = tmp_path / "cache" / "agent-lsp" / "demo"
    assert len(list((demo_folder / "sessions").rglob("*.jsonl"))) == 1  # the first run's is gone
    assert "Session log (" in runs[-1].stdout and str(demo_folder) in runs[-1].stdout

    hint = re.search(r"Next: (\S+) run ", runs[-1].stdout)
    assert hint, runs[-1].stdout
    assert hint.group(1) == "venv/bin/agent-lsp"
    again = subprocess.run([hint.group(1), "--version"], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0 and again.stdout.startswith("agent-lsp "), again.stderr


# ------------------------------------------------------ with a model configured


class _FakeChatCompletions(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that plays the model's side of the demo:
    read the file, fix it, say so. It records the requests it got."""

    requests: list[dict] = []

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def do_GET(self) -> None:  # context-window discovery (/v1/models, /props): nothing to say
        self.send_error(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.path.endswith("/chat/completions"):  # context-window discovery: not this server
            self.send_error(404)
            return
        self.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            deltas = [{"content": "Reading it. "},
                      {"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                       "function": {"name": "read_file", "arguments": '{"path": "stats.py"}'}}]}]
            finish = "tool_calls"
        elif turn == 1:
            edit = {"path": "stats.py", "edits": [{"oldText": "(len(values) - 1)", "newText": "len(values)"}]}
            deltas = [{"tool_calls": [{"index": 0, "id": "call_b", "type": "function",
                                       "function": {"name": "edit_file", "arguments": json.dumps(edit)}}]}]
            finish = "tool_calls"
        else:
            deltas = [{"content": "Fixed by the "}, {"content": "real model."}]
            finish = "stop"
        chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload.encode())))
        self.end_headers()
        self.wfile.write(payload.encode())


def test_demo_uses_the_configured_model(tmp_path: Path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeChatCompletions)
    _FakeChatCompletions.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = clean_env(tmp_path, OPENAI_API_KEY="sk-test-demo",
                        OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_port}/v1")
        demo_dir = tmp_path / "demo"
        done = agent_lsp(["demo", "--dir", str(demo_dir)], env, timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "openai" in done.stdout and "scripted" not in done.stdout
    assert "Reading it." in done.stdout and "Fixed by the real model." in done.stdout
    assert "    return sum(values) / len(values)\n" in (demo_dir / "workspace" / "stats.py").read_text()
    # The demo's prompt went to the model, with the key from the environment.
    first = _FakeChatCompletions.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-test-demo"
    assert "mean() in stats.py returns wrong results" in json.dumps(first["body"]["messages"])
    assert len(_FakeChatCompletions.requests) == 3
