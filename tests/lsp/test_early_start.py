"""The first messages of a start are answered before pygls has loaded, and a
client cannot tell: what it sends at once, before any answer, gets the same
answers and the same events, in the same order, as from a server that loaded
first (`AGENT_LSP_NO_INIT_CACHE=1`), bad params included.

Each test starts the real server (`python -m agent_lsp.lsp`) three times on
one cache directory: the first start writes the caches, the second answers
early, the third has the early phase turned off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import asyncio

import pytest

from agent_lsp.lsp.handshake import frame
from agent_lsp.lsp.transport import FrameReader

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402

TIMEOUT_S = 30


class RawClient:
    """A client that writes its messages before reading any answer, then reads
    until `done` says so, answering the server's requests (with null, or with
    `configuration`'s answer: a result, or {"error": ...}, after `configuration_delay_s`)."""

    configuration: Any = None
    configuration_delay_s = 0.0

    def __init__(self, tmp_path: Path, *, early: bool, log: Path | None = None):
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), AGENT_LSP_CONFIG=str(tmp_path / "none.toml"))
        env.pop("AGENT_LSP_NO_INIT_CACHE", None)
        if not early:
            env["AGENT_LSP_NO_INIT_CACHE"] = "1"
        if log is not None:
            env["AGENT_LSP_LOG_LEVEL"] = "debug"
        self.proc = subprocess.Popen([sys.executable, "-m", "agent_lsp.lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=open(log or os.devnull, "wb"), env=env)
        self.frames = FrameReader(self.proc.stdout)
        self.received: list[dict[str, Any]] = []

    def send(self, *messages: dict[str, Any] | bytes) -> None:
        data = b"".join(frame(m) if isinstance(m, dict) else b"Content-Length: %d\r\n\r\n" % len(m) + m
                        for m in messages)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_until(self, done) -> list[dict[str, Any]]:
        deadline = time.monotonic() + TIMEOUT_S
        while not done(self.received):
            assert time.monotonic() < deadline, self.received
            body = self.frames.read()
            assert body is not None, f"the server ended early: {self.received}"
            message = json.loads(body)
            self.received.append(message)
            if "method" in message and "id" in message:  # a request of the server
                self.send(self.answer_to(message))
        return self.received

    def answer_to(self, request: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"], "result": None}
        if request["method"] == "workspace/configuration":
            time.sleep(self.configuration_delay_s)
            if isinstance(self.configuration, dict) and "error" in self.configuration:
                return {"jsonrpc": "2.0", "id": request["id"], "error": self.configuration["error"]}
            answer["result"] = self.configuration
        return answer

    def close(self) -> int:
        self.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"})
        self.read_until(lambda got: any(m.get("id") == "bye" for m in got))
        self.proc.stdin.close()
        return self.proc.wait(TIMEOUT_S)


def initialize(tmp_path: Path, script: list, *, capabilities: dict | None = None, **params: Any) -> dict:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": None, "rootUri": workspace.as_uri(),
                       "capabilities": capabilities if capabilities is not None else
                       {"experimental": {"agentLsp": {"events": True}}},
                       "initializationOptions": {"sessionsDir": str(tmp_path / "sessions"),
                                                 "model": {"provider": "scripted", "script": script}},
                       **params}}


INITIALIZED = {"jsonrpc": "2.0", "method": "initialized", "params": {}}


def answer(received: list[dict], request_id: Any) -> dict:
    (found,) = [m for m in received if m.get("id") == request_id and "method" not in m]
    return found


def transcript(received: list[dict]) -> list[Any]:
    """What the client saw, in order, without what differs from one run to the
    next (session ids, times, how many text deltas one notification merged)."""
    seen: list[Any] = []
    for message in received:
        if "method" not in message:
            seen.append(("answer", message["id"], sorted(message.get("result") or {}) if "result" in message
                         else message["error"]))
        elif message["method"] == "session/event":
            for event in message["params"]["events"]:
                if not (seen and seen[-1] == ("event", event["type"]) and event["type"] == "assistant/chunk"):
                    seen.append(("event", event["type"]))
        elif message["method"] == "agent/status":
            seen.append(("status", message["params"]["status"]))
        elif message["method"] in ("window/showMessage", "window/logMessage"):
            seen.append((message["method"], message["params"]["message"]))
        else:
            seen.append((message["method"],))
    return seen


def three_starts(tmp_path: Path, run, *, early_log: tuple[str, ...] = ("before the server loaded",),
                 **client: Any) -> tuple[Any, Any, Any]:
    """`run(client)` on a first start (writes the caches), an early start (its
    log has each of `early_log`), and a start with the early phase turned off; what
    each returned. `client`: RawClient's class attributes for the three."""
    def start(**kw: Any) -> RawClient:
        made = RawClient(tmp_path, **kw)
        made.__dict__.update(client)
        return made

    first = run(start(early=True))
    log = tmp_path / "early.log"
    early = run(start(early=True, log=log))
    text = log.read_text()
    assert all(line in text for line in early_log), f"the second start did not log all of {early_log!r}"
    late = run(start(early=False))
    return first, early, late


def test_a_session_opened_and_prompted_at_once_streams_as_from_a_loaded_server(tmp_path):
    """initialize, initialized, agent/session/new, a didOpen and a prompt (the
    followup command, on the current session) sent back to back: every answer
    once, the prompt runs on the session the early answer named, reads the open
    buffer (not the file on disk), and streams every event, in order."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.py").write_text("on disk\n")
    script = [{"tools": [{"name": "read_file", "arguments": {"path": "a.py"}, "id": "c1"}]}, {"text": "read it"}]

    def run(client: RawClient) -> tuple[list, str, str, int]:
        uri = (tmp_path / "ws" / "a.py").as_uri()
        client.send(initialize(tmp_path, script), INITIALIZED,
                    {"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {"title": "early"}},
                    {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "in the buffer\n"}}},
                    {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
                     "params": {"command": "agentLsp.followup", "arguments": [{"content": "read a.py"}]}})
        received = client.read_until(lambda got: ("status", "idle") in transcript(got))
        session_id = answer(received, 2)["result"]["sessionId"]
        assert answer(received, 3)["result"]["sessionId"] == session_id
        events = [e for m in received if m.get("method") == "session/event" for e in m["params"]["events"]]
        assert {m["params"]["sessionId"] for m in received if m.get("method") == "session/event"} == {session_id}
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        result = next(e for e in events if e["type"] == "tool/result")
        code = client.close()
        return transcript(received), json.dumps(result["data"]), session_id, code

    first, early, late = three_starts(tmp_path, run)
    for seen, tool_result, _, code in (first, early, late):
        assert "in the buffer" in tool_result and "on disk" not in tool_result
        assert code == 0
    assert early[0] == late[0] == first[0]
    assert len([s for s in early[0] if s[:2] == ("answer", 1)]) == 1


def test_the_session_a_quick_start_opened_is_the_servers(tmp_path):
    """Ten sessions opened before pygls has loaded are listed, loaded and
    renamed by the server afterwards as its own."""

    def run(client: RawClient) -> list:
        client.send(initialize(tmp_path, []), INITIALIZED,
                    *[{"jsonrpc": "2.0", "id": 10 + i, "method": "agent/session/new", "params": {}} for i in range(10)])
        received = client.read_until(lambda got: all(any(m.get("id") == 10 + i for m in got) for i in range(10)))
        ids = [answer(received, 10 + i)["result"]["sessionId"] for i in range(10)]
        client.send({"jsonrpc": "2.0", "id": 30, "method": "agent/session/list", "params": {}},
                    {"jsonrpc": "2.0", "id": 31, "method": "agent/session/rename", "params": {"sessionId": ids[3], "title": "renamed"}},
                    {"jsonrpc": "2.0", "id": 32, "method": "agent/session/load", "params": {"sessionId": ids[3]}})
        received = client.read_until(lambda got: {30, 31, 32} <= {m.get("id") for m in got})
        listed = answer(received, 30)["result"]["sessions"]
        assert set(ids) <= {s["sessionId"] for s in listed}
        assert answer(received, 31)["result"] == {"title": "renamed"}
        assert answer(received, 32)["result"]["sessionId"] == ids[3]
        assert client.close() == 0
        return sorted(map(repr, transcript(received)))  # the list is answered off the loop: in any order

    first, early, late = three_starts(tmp_path, run)
    assert early == late == first


@pytest.mark.parametrize("params", [
    {"title": 7},
    {"workspaceUri": "file:///no/such/folder"},
    {"workspaceUri": "untitled:x"},
    [1, 2],
    {"title": "\ud800"},
])
def test_bad_session_new_params_get_the_same_error_early_as_later(tmp_path, params):
    def run(client: RawClient) -> list:
        bad = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": params}).encode()
        client.send(initialize(tmp_path, []), INITIALIZED, bad,
                    {"jsonrpc": "2.0", "id": 3, "method": "agent/session/new", "params": {}})
        received = client.read_until(lambda got: any(m.get("id") == 3 for m in got))
        assert "error" in answer(received, 2) and "result" in answer(received, 3)
        assert client.close() == 0
        return [answer(received, 2)["error"], transcript(received)]

    first, early, late = three_starts(tmp_path, run)
    assert early == late == first
    assert early[0]["code"] == -32602


def test_settings_problems_are_shown_once_before_the_first_session(tmp_path):
    def run(client: RawClient) -> list:
        init = initialize(tmp_path, [])
        init["params"]["initializationOptions"]["maxParallelToolCalls"] = "many"
        client.send(init, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {}})
        client.read_until(lambda got: any(m.get("id") == 2 for m in got))
        assert client.close() == 0
        return transcript(client.received)

    first, early, late = three_starts(tmp_path, run)
    assert early == late == first
    shown = [s for s in early if s[0] == "window/showMessage"]
    assert len(shown) == 2 and "maxParallelToolCalls" in " ".join(s[1] for s in shown)  # and the missing config file
    assert early.index(shown[-1]) < early.index(("answer", 2, ["sessionId"]))


PULLS = {"workspace": {"configuration": True}, "experimental": {"agentLsp": {"events": True}}}
PULLED = [{"model": {"provider": "scripted", "script": [{"text": "pulled"}]}}]


def pulled_session(client: RawClient, tmp_path: Path, *before_session: dict, capabilities: dict = PULLS) -> list:
    """initialize, initialized, `before_session`, agent/session/new at once, then a
    prompt on that session: the text it streamed, and what the client saw."""
    client.send(initialize(tmp_path, [{"text": "from initializationOptions"}], capabilities=capabilities),
                INITIALIZED, *before_session, {"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {}})
    session_id = answer(client.read_until(lambda got: any(m.get("id") == 2 for m in got)), 2)["result"]["sessionId"]
    client.send({"jsonrpc": "2.0", "id": 3, "method": "agent/followup", "params": {"sessionId": session_id, "content": "hi"}})
    client.read_until(lambda got: ("status", "idle") in transcript(got))
    text = "".join(e["data"]["chunk"].get("text", "") for m in client.received if m.get("method") == "session/event"
                   for e in m["params"]["events"] if e["type"] == "assistant/chunk")
    assert client.close() == 0
    return [text, transcript(client.received)]


CHANGED = {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"agentLsp": {}}}}


@pytest.mark.parametrize("changed", [False, True], ids=["initialized", "and didChangeConfiguration (Neovim)"])
def test_a_client_whose_settings_are_pulled_gets_them_in_its_first_session_early(tmp_path, changed):
    """A client that declares workspace/configuration: the early phase asks for
    the settings as the server would (again at a didChangeConfiguration), and
    the session it answers (sent before the settings were answered) is made with
    them; a didOpen sent meanwhile reaches the server."""
    uri = (tmp_path / "ws" / "a.py").as_uri()
    did_open = {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x\n"}}}
    before = [CHANGED, did_open] if changed else [did_open]
    runs = three_starts(tmp_path, lambda client: pulled_session(client, tmp_path, *before),
                        early_log=("applied the settings asked for before the server loaded",
                                   "answered agent/session/new before the server loaded"), configuration=PULLED)
    first, early, late = runs
    assert early == late == first
    assert early[0] == "pulled"
    assert early[1].count(("workspace/configuration",)) == (2 if changed else 1)


def test_settings_pushed_with_did_change_configuration_are_in_the_first_session(tmp_path):
    """A client that does not answer workspace/configuration and pushes its
    settings at once: the session answered early is made with them."""
    pushed = {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
              "params": {"settings": {"agentLsp": PULLED[0]}}}
    plain = {"experimental": {"agentLsp": {"events": True}}}
    first, early, late = three_starts(tmp_path, lambda client: pulled_session(client, tmp_path, pushed, capabilities=plain),
                                      early_log=("answered agent/session/new before the server loaded",))
    assert early == late == first
    assert early[0] == "pulled"


@pytest.mark.parametrize("configuration", [
    [{"maxParallelToolCalls": "many", "model": {"provider": "scripted", "script": [{"text": "pulled"}]}}],
    [],
    None,
    {"error": {"code": -32601, "message": "no such method"}},
])
def test_pulled_settings_their_problems_and_failures_are_answered_early_as_later(tmp_path, configuration):
    """Settings with a problem (shown once, before the session's answer), none,
    and an error answer: the early start answers as the server does."""
    first, early, late = three_starts(tmp_path, lambda client: pulled_session(client, tmp_path),
                                      early_log=("answered agent/session/new before the server loaded",),
                                      configuration=configuration)
    assert early == late == first
    pulled = isinstance(configuration, list) and bool(configuration)
    assert early[0] == ("pulled" if pulled else "from initializationOptions")
    shown = [s for s in early[1] if s[0] == "window/showMessage"]
    assert any("maxParallelToolCalls" in s[1] for s in shown) == pulled
    assert all(early[1].index(s) < early[1].index(("answer", 2, ["sessionId"])) for s in shown)


def test_a_configuration_answer_of_another_shape_does_not_hold_the_first_session(tmp_path):
    """A client answering workspace/configuration with null (not the list LSP asks
    for): the session and its prompt are answered at once, without waiting for settings."""
    client = RawClient(tmp_path, early=False, log=tmp_path / "server.log")
    client.configuration = None
    assert pulled_session(client, tmp_path)[0] == "from initializationOptions"
    assert "still being pulled" not in (tmp_path / "server.log").read_text()


class SilentClient(RawClient):
    """Never answers workspace/configuration."""

    def answer_to(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["method"] == "workspace/configuration":
            return {"jsonrpc": "2.0", "method": "$/ignored"}
        return super().answer_to(request)


def test_a_client_that_never_answers_configuration_costs_one_wait_not_one_per_request(tmp_path):
    client = SilentClient(tmp_path, early=False, log=tmp_path / "server.log")
    assert pulled_session(client, tmp_path)[0] == "from initializationOptions"
    # One bounded wait (5 s) for the first request; the prompt after it did not wait again.
    assert (tmp_path / "server.log").read_text().count("still being pulled") == 1


def test_settings_answered_after_the_server_loaded_are_taken_as_its_own(tmp_path):
    """A client slow to answer workspace/configuration: the server loads meanwhile
    and takes the early request over (not asking again); the held session is
    made with the settings once they come."""
    first, early, late = three_starts(tmp_path, lambda client: pulled_session(client, tmp_path),
                                      configuration=PULLED, configuration_delay_s=3.0)
    assert early == late == first
    assert early[0] == "pulled"
    assert early[1].count(("workspace/configuration",)) == 1
    assert "unknown message id" not in (tmp_path / "early.log").read_text()


def test_a_client_that_leaves_after_the_early_answers_ends_the_server(tmp_path):
    def run(client: RawClient) -> int:
        client.send(initialize(tmp_path, []), INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "agent/session/new"})
        client.read_until(lambda got: any(m.get("id") == 2 for m in got))
        client.proc.stdin.close()
        return client.proc.wait(TIMEOUT_S)

    assert three_starts(tmp_path, run) == (0, 0, 0)


async def test_a_session_with_an_http_provider_opened_early_streams_from_the_model_server(tmp_path):
    """The provider's HTTP client is made with its first request, not when the
    session opens: an early session with an OpenAI-compatible provider answers
    its prompt from a real local model server, as a server that loaded first does."""
    fake = FakeServer()
    await fake.start()
    model = {"provider": "openai", "baseUrl": fake.url + "/v1", "apiKey": "test-key", "model": "m", "contextWindow": 8192}

    def run(client: RawClient) -> str:
        init = initialize(tmp_path, [])
        init["params"]["initializationOptions"]["model"] = model
        client.send(init, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {}})
        session_id = answer(client.read_until(lambda got: any(m.get("id") == 2 for m in got)), 2)["result"]["sessionId"]
        client.send({"jsonrpc": "2.0", "id": 3, "method": "agent/followup", "params": {"sessionId": session_id, "content": "hi"}})
        received = client.read_until(lambda got: ("status", "idle") in transcript(got))
        assert client.close() == 0
        return "".join(e["data"]["chunk"].get("text", "") for m in received if m.get("method") == "session/event"
                       for e in m["params"]["events"] if e["type"] == "assistant/chunk")

    try:
        fake.queue(*[Reply.openai_text("from the model server") for _ in range(3)])
        texts = await asyncio.to_thread(three_starts, tmp_path, run)
    finally:
        await fake.stop()
    assert texts == ("from the model server",) * 3
    assert [seen.path for seen in fake.requests] == ["/v1/chat/completions"] * 3


def test_the_early_answer_has_the_wire_models_form():
    """The early phase answers agent/session/new params in the plain form only;
    for those the wire model reads the same values, and its answer is the
    wire model's `SessionRef`."""
    from agent_lsp.lsp import protocol as wire
    from agent_lsp.lsp.early import _plain_session_new

    variants = [None, {}, {"title": "t"}, {"workspaceUri": "file:///x", "title": None}, {"title": 7},
                {"workspace_uri": "file:///x"}, {"mode": "plan"}, [], "x", {"title": "\ud800"}]
    for params in variants:
        plain = _plain_session_new(params)
        if plain is not None:
            model = wire.SessionNewParams.model_validate(params or {})
            assert (model.workspace_uri, model.title) == plain
    assert _plain_session_new({"worktree": True}) is None  # made by the server: git runs first
    assert set(wire.SessionNewParams.model_fields) == {"workspace_uri", "title", "worktree"}, "update agent_lsp/lsp/early.py"
    assert wire.wire_dump(wire.SessionRef(session_id="s_1")) == {"sessionId": "s_1"}
