"""The handshake cache: a second start answers `initialize` from the cache, exactly once;
the cache follows what pygls answers."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from agent_lsp.lsp.handshake import frame
from agent_lsp.lsp.transport import FrameReader


def run_session(tmp_path, messages: list, env: dict | None = None) -> list[dict]:
    """Send framed messages (dicts, or raw bytes bodies) to `python -m agent_lsp.lsp`;
    return every message it wrote."""
    extra = env or {}
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), AGENT_LSP_CONFIG=str(tmp_path / "none.toml"))
    env.pop("AGENT_LSP_NO_INIT_CACHE", None)
    env.update(extra)
    data = b"".join(frame(m) if isinstance(m, dict) else b"Content-Length: %d\r\n\r\n" % len(m) + m for m in messages)
    proc = subprocess.run(
        [sys.executable, "-m", "agent_lsp.lsp"], input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=30
    )
    frames = FrameReader(io.BytesIO(proc.stdout))
    out = []
    while (body := frames.read()) is not None:
        out.append(json.loads(body))
    return out


def test_second_start_answers_initialize_from_the_cache_exactly_once(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": {"sessionsDir": str(tmp_path / "sessions")},
        },
    }
    script = [init, {"jsonrpc": "2.0", "method": "initialized", "params": {}},
              {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]

    first = run_session(tmp_path, script)
    cached = list((tmp_path / "cache" / "agent-lsp").glob("initialize-*.json"))
    assert len(cached) == 1
    second = run_session(tmp_path, script)

    for out in (first, second):
        answers = [m for m in out if m.get("id") == 1]
        assert len(answers) == 1, out
        assert [m for m in out if m.get("id") == 2] == [{"jsonrpc": "2.0", "id": 2, "result": None}]
    result_1 = next(m for m in first if m.get("id") == 1)["result"]
    result_2 = next(m for m in second if m.get("id") == 1)["result"]
    assert result_1 == result_2 == json.loads(cached[0].read_text())
    assert "agentLsp.followup" in result_2["capabilities"]["executeCommandProvider"]["commands"]


def test_garbage_on_the_wire_does_not_kill_the_server(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
                       "initializationOptions": {"sessionsDir": str(tmp_path / "sessions")}}}
    out = run_session(
        tmp_path,
        [
            init,
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            b"{this is not json",
            {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {"textDocument": 42}},
            {"jsonrpc": "2.0", "id": 3, "method": "agent/session/new", "params": {"title": 7}},
            {"jsonrpc": "2.0", "id": 4, "method": "agent/session/list", "params": {}},
            {"jsonrpc": "2.0", "id": 5, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        ],
    )
    by_id = {m.get("id"): m for m in out if "id" in m and "method" not in m}
    assert by_id[2]["error"]["code"] == -32602 and "textDocument" in by_id[2]["error"]["message"]
    assert by_id[3]["error"]["code"] == -32602 and "title" in by_id[3]["error"]["message"]
    assert by_id[4]["result"] == {"sessions": []}
    assert by_id[5]["result"] is None


def test_a_cache_that_differs_from_pygls_answer_is_replaced(tmp_path):
    """A cache file with the right key but another answer (written by code that
    registered other features) is used once, then replaced by what pygls answers."""
    script = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": None, "capabilities": {}}},
              {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
    first = run_session(tmp_path, script)
    (cached,) = (tmp_path / "cache" / "agent-lsp").glob("initialize-*.json")
    stale = {"capabilities": {"executeCommandProvider": {"commands": ["agentLsp.gone"]}}, "serverInfo": {"name": "agent-lsp"}}
    cached.write_text(json.dumps(stale))

    second = run_session(tmp_path, script)
    third = run_session(tmp_path, script)

    assert [m["result"] for m in second if m.get("id") == 1] == [stale]
    assert json.loads(cached.read_text()) == next(m for m in first if m.get("id") == 1)["result"]
    assert [m["result"] for m in third if m.get("id") == 1] == [m["result"] for m in first if m.get("id") == 1]
