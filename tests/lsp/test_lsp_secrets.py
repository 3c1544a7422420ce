"""No configured secret leaves the server in clear, at any log level.

A canary key or token goes into every secret input (env vars, the config
file, `initializationOptions`, `workspace/configuration`); the model server
echoes all of them back the way a broken proxy would: inside a malformed
stream chunk (a transient fault: `llm/retry`), in streamed text split over
two deltas, and in a 401 error message. The server runs as `agent-lsp serve`
with its output teed to a file, so every byte the client received is checked,
as are the log file, stderr and every file under the sessions and cache dirs.
"""

from __future__ import annotations

import json
import secrets
import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402
from lsp_harness import running_server  # noqa: E402


def canary(name: str) -> str:
    # not shaped like any known key format: only registration can catch it
    return f"Cnry{name}-{secrets.token_hex(8)}"


def sse(*payloads: str) -> bytes:
    return b"".join(f"data: {p}\n\n".encode() for p in payloads)


def delta(text: str) -> str:
    return json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]})


FINISH = json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})


def every_file_under(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in roots if root.exists() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("level", ["debug", "info", "warning", "error"])
async def test_no_secret_in_logs_session_files_or_anything_the_client_received(tmp_path, level):
    c = {name: canary(name) for name in ("EnvKey", "EnvOpenai", "EnvGateway", "FileKey", "FileHdr", "InitKey", "InitHdr", "WsKey", "WsHdr")}
    fake = FakeServer()
    await fake.start()
    base_url = f"{fake.url}/v1"
    everything = " ".join(c.values())
    # turn 1: a delta, then a broken chunk quoting the request's credentials (retried) ...
    fake.queue(Reply.sse(sse(delta("hello "), f'{{"oops": "Bearer {c["WsKey"]} {everything}"'), awkward=False))
    # ... then an answer that repeats a key split over two deltas
    fake.queue(Reply.sse(sse(delta(f"your key is {c['WsKey'][:9]}"), delta(f"{c['WsKey'][9:]}, ok"), FINISH, "[DONE]"), awkward=False))
    # turn 2: a 401 that quotes them
    fake.queue(Reply.json(401, {"error": {"message": f"Incorrect API key provided: {everything}", "type": "invalid_request_error"}}))

    workspace = tmp_path / "ws"
    workspace.mkdir()
    sessions = tmp_path / "sessions"
    config = tmp_path / "config.toml"
    config.write_text(f'[model]\napiKey = "{c["FileKey"]}"\nheaders = {{ "X-File-Token" = "{c["FileHdr"]}" }}\n')
    log_file, stderr_file, received = tmp_path / "server.log", tmp_path / "stderr.txt", tmp_path / "received.bin"
    shell = (f"{shlex.quote(sys.executable)} -m agent_lsp.cli.main serve --log-level {level} --log-file {log_file} "
             f"2>{stderr_file} | tee {received}")
    env = {"AGENT_LSP_CONFIG": str(config), "AGENT_LSP_API_KEY": c["EnvKey"], "OPENAI_API_KEY": c["EnvOpenai"],
           "GATEWAY_TOKEN": c["EnvGateway"], "AGENT_LSP_NO_INIT_CACHE": "1"}
    init = {"model": {"provider": "openai", "baseUrl": base_url, "apiKey": c["InitKey"], "headers": {"X-Init-Token": c["InitHdr"]}},
            "sessionsDir": str(sessions)}
    workspace_config = {"model": {"provider": "openai", "baseUrl": base_url, "apiKey": c["WsKey"], "headers": {"X-Ws-Token": c["WsHdr"]}}}
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions, settings=init, configuration=workspace_config,
                                  env=env, command=["sh", "-c", shell]) as editor:
            sid = (await editor.request("agent/followup", {"content": "hi"}))["sessionId"]
            await editor.wait_idle(sid)
            statuses = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": "again"})
            await editor.wait_idle(sid, statuses)
            loaded = await editor.raw_request("agent/session/load", {"sessionId": sid})
            await editor.request("agent/session/list", {})
    finally:
        await fake.stop()

    # the canaries were live: sent to the model server, echoed back, and the server saw the faults
    sent = fake.requests[0].headers
    assert sent["authorization"] == f"Bearer {c['WsKey']}"
    assert (sent["x-file-token"], sent["x-init-token"], sent["x-ws-token"]) == (c["FileHdr"], c["InitHdr"], c["WsHdr"])
    types = [e["type"] for e in loaded["events"]]
    assert "llm/retry" in types and types.count("turn/end") == 2
    retry = next(e for e in loaded["events"] if e["type"] == "llm/retry")
    assert "malformed JSON" in json.dumps(retry) and "***" in json.dumps(retry)
    assert editor.of("agent/error"), "the 401 reached the client as agent/error"
    assert "***" in json.dumps(editor.of("agent/error"))
    log = log_file.read_text()
    if level == "debug":
        assert "initializationOptions" in log or "initialization_options" in log  # pygls dumped the messages

    places = {"log file": log_file.read_bytes(), "stderr": stderr_file.read_bytes(), "received by the client": received.read_bytes()}
    places.update({str(path): data for path, data in every_file_under(sessions, tmp_path / "cache").items()})
    assert len(places["received by the client"]) > 1000
    leaks = [(name, where) for name, value in c.items() for where, data in places.items() if value.encode() in data]
    assert leaks == []
