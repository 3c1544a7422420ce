"""Neovim as one window of the agent host, beside another window on the same
session: a permission question asked in both is answered in the other one,
and Neovim's card goes away saying so (headless Neovim, the real host)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from nvim_harness import Editor

from test_permission_questions import CARD, WAITING, command

CONNECTOR = [sys.executable, "-m", "agent_lsp", "--host"]


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class OtherWindow:
    """A second editor window on the host: a plain JSON-RPC client over stdio
    that follows a session and answers every permission question "once"."""

    def __init__(self, env: dict[str, str], workspace: Path, settings: dict):
        self.proc = subprocess.Popen(CONNECTOR, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.answers: dict[int, threading.Event] = {}
        self.results: dict[int, dict] = {}
        self.asked: list[dict] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        self.request(1, "initialize", {"processId": None, "rootUri": workspace.as_uri(), "initializationOptions": settings,
                                       "capabilities": {"experimental": {"agentLsp": {"permissions": True, "events": True}}}})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, message: dict) -> None:
        with self.lock:
            self.proc.stdin.write(frame(message))
            self.proc.stdin.flush()

    def request(self, msg_id: int, method: str, params: dict) -> dict:
        self.answers[msg_id] = threading.Event()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        assert self.answers[msg_id].wait(30), method
        return self.results[msg_id]

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                elif line.strip() == b"" and length is not None:
                    break
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:
                if message["method"] == "agent/permission":
                    self.asked.append(message["params"])
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"answer": "once"}})
                else:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" not in message and message.get("id") in self.answers:
                self.results[message["id"]] = message
                self.answers[message["id"]].set()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def test_a_question_answered_in_another_window_leaves_neovim(editor: Editor, workspace: Path, sessions_dir: Path,
                                                             tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    host_env = {"AGENT_LSP_HOST_SOCKET": str(run / "host.sock")}
    script = [{"text": "hello"}, command("echo from-the-host"), {"text": "ran it"}]
    editor.setup(script, sessions_dir, cmd=CONNECTOR, cmd_env=host_env)
    other = None
    try:
        editor.edit("a.py")
        editor.wait_attached()
        editor.cmd("AgentAsk hi")
        editor.wait_idle()
        sid = editor.lua("return T.session().id")
        settings = {"sessionsDir": str(sessions_dir), "model": {"provider": "scripted", "script": []}}
        other = OtherWindow(dict(os.environ, **host_env), workspace, settings)
        loaded = other.request(2, "agent/session/load", {"sessionId": sid})
        assert loaded["result"]["status"] == "idle" and "heldByPid" not in loaded["result"]  # followed, live

        editor.cmd("AgentAsk run it")
        editor.wait("#require('agent_lsp.state').sessions[T.session().id].events > 0 and "
                    "vim.tbl_contains(vim.tbl_map(function(n) return n.msg end, _G.test_notes), "
                    "'agent_lsp: the question was answered in another window')", what="the answered notice")
        editor.wait_idle()
        assert other.asked and other.asked[0]["permissionId"]
        assert editor.lua(CARD) == []
        assert not editor.lua(f"return {WAITING}")
        assert any("echo from-the-host" in line and "exit 0" in line for line in editor.chat_lines())
    finally:
        if other is not None:
            other.close()
        pid_file = run / "host.sock.lock"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
