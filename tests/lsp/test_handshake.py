"""`initialize` is answered before pygls has loaded, with the answer pygls gives:
for the capabilities real editors declare and the variants pygls answers
differently; params pygls rejects get pygls' own error."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from agent_lsp.lsp.handshake import frame
from agent_lsp.lsp.transport import FrameReader

EARLY_LOG = "answered initialize before the server loaded"
DIFFERS_LOG = "differs from pygls' answer"
OMITTED = object()  # a field left out of the params


def run_session(tmp_path, messages: list, env: dict | None = None) -> tuple[list[dict], str]:
    """Send framed messages (dicts, or raw bytes bodies) to `python -m agent_lsp.lsp`;
    every message it wrote, and its log."""
    extra = env or {}
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), AGENT_LSP_CONFIG=str(tmp_path / "none.toml"),
               AGENT_LSP_LOG_LEVEL="debug")
    env.pop("AGENT_LSP_NO_INIT_CACHE", None)
    env.update(extra)
    data = b"".join(frame(m) if isinstance(m, dict) else b"Content-Length: %d\r\n\r\n" % len(m) + m for m in messages)
    proc = subprocess.run([sys.executable, "-m", "agent_lsp.lsp"], input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, timeout=30)
    frames = FrameReader(io.BytesIO(proc.stdout))
    out = []
    while (body := frames.read()) is not None:
        out.append(json.loads(body))
    return out, proc.stderr.decode("utf-8", "replace")


def handshake(tmp_path, params: dict) -> list[dict]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    params = {"processId": None, "rootUri": workspace.as_uri(),
              "initializationOptions": {"sessionsDir": str(tmp_path / "sessions")}, **params}
    params = {key: value for key, value in params.items() if value is not OMITTED}
    return [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]


def early_and_late(tmp_path, params: dict) -> tuple[list[dict], str, list[dict]]:
    """The answers to `initialize` of a start with the early phase (and its log),
    and of a start without it."""
    script = handshake(tmp_path, params)
    early, log = run_session(tmp_path, script)
    late, _ = run_session(tmp_path, script, {"AGENT_LSP_NO_INIT_CACHE": "1"})
    return [m for m in early if m.get("id") == 1], log, [m for m in late if m.get("id") == 1]


SYNC_ALL = {"dynamicRegistration": False, "willSave": True, "willSaveWaitUntil": True, "didSave": True}
CLIENTS = {
    "none declared": {"capabilities": {}},
    # what VS Code declares where pygls' answer depends on it
    "vscode": {"capabilities": {"general": {"positionEncodings": ["utf-16"]},
                                "textDocument": {"synchronization": SYNC_ALL},
                                "notebookDocument": {"synchronization": {"dynamicRegistration": True}},
                                "workspace": {"configuration": True, "workspaceFolders": True,
                                              "fileOperations": {"didCreate": True, "willCreate": True,
                                                                 "didRename": True, "willRename": True,
                                                                 "didDelete": True, "willDelete": True}}},
               "clientInfo": {"name": "Visual Studio Code", "version": "1.100.0"}, "locale": "en", "trace": "off"},
    "neovim": {"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
                                "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True,
                                                                     "didSave": True}},
                                "workspace": {"configuration": True, "workspaceFolders": True}},
               "clientInfo": {"name": "Neovim", "version": "0.11.0"}, "workDoneToken": "1"},
    "emacs eglot": {"capabilities": {"general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]},
                                     "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True,
                                                                          "didSave": True}},
                                     "experimental": {}},
                    "clientInfo": {"name": "Eglot", "version": "1.17"}},
    "no processId": {"processId": OMITTED, "capabilities": {}, "locale": "de"},
    "will-save declared false": {"capabilities": {"textDocument": {"synchronization": {"willSave": False}}}},
    "unknown encodings only": {"capabilities": {"general": {"positionEncodings": ["utf-7", "bytes"]}}},
    "workspace folders": {"capabilities": {"workspace": {"workspaceFolders": True}},
                          "workspaceFolders": [{"uri": "file:///tmp/a", "name": "a"}], "trace": "verbose"},
}


@pytest.mark.parametrize("client", CLIENTS)
def test_initialize_is_answered_early_as_pygls_answers_it(tmp_path, client):
    early, log, late = early_and_late(tmp_path, CLIENTS[client])
    assert len(early) == 1 and len(late) == 1, (early, late)
    assert EARLY_LOG in log, log
    assert DIFFERS_LOG not in log, log
    assert early[0]["result"] == late[0]["result"]
    assert late[0]["result"]["serverInfo"]["name"] == "agent-lsp"
    assert "agentLsp.followup" in late[0]["result"]["capabilities"]["executeCommandProvider"]["commands"]


@pytest.mark.parametrize("params", [
    {"processId": "x", "capabilities": {}},
    {"capabilities": None},
    {"capabilities": {}, "trace": "loud"},
    {"capabilities": {"textDocument": 5}},
])
def test_initialize_params_pygls_rejects_get_its_error(tmp_path, params):
    early, log, late = early_and_late(tmp_path, params)
    assert EARLY_LOG not in log
    assert len(early) == 1 and early == late
    assert early[0]["error"]["code"] == -32602


def test_a_deep_capability_pygls_rejects_is_answered_early_and_logged(tmp_path):
    """No editor sends a malformed capability deep down, and the early phase does
    not check every one: it answers, the server logs pygls' error, and sessions
    work as after pygls' own error answer."""
    params = {"capabilities": {"textDocument": {"hover": 5}}}
    script = handshake(tmp_path, params)
    script[-2:-2] = [{"jsonrpc": "2.0", "id": 3, "method": "agent/session/new", "params": {}}]
    early, log = run_session(tmp_path, script)
    late, _ = run_session(tmp_path, script, {"AGENT_LSP_NO_INIT_CACHE": "1"})
    assert EARLY_LOG in log and DIFFERS_LOG in log and "hover" in log
    assert "result" in answer(early, 1) and answer(late, 1)["error"]["code"] == -32602
    assert "sessionId" in answer(early, 3)["result"] and "sessionId" in answer(late, 3)["result"]


def answer(received: list[dict], request_id: int) -> dict:
    (found,) = [m for m in received if m.get("id") == request_id and "method" not in m]
    return found


def test_garbage_on_the_wire_does_not_kill_the_server(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
                       "initializationOptions": {"sessionsDir": str(tmp_path / "sessions")}}}
    out, _ = run_session(
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
