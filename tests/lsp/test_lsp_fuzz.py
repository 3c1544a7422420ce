"""Every message with an id gets exactly one answer, with the right code, and
the server keeps serving: a seeded, bounded fuzz of the JSON-RPC surface
(the long run is bench/lsp_fuzz.py), and framing faults, each in its own server."""

from __future__ import annotations

import json
import time

from hypothesis import HealthCheck, given, settings

from agent_lsp.lsp.transport import MAX_MESSAGE_BYTES
from lsp_fuzzing import RawServer, cases, frame, problems_of


def test_fuzzed_requests_each_get_exactly_one_right_answer(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()
    sessions = [server.request("agent/session/new", {})["result"]["sessionId"] for _ in range(3)]
    failures: list[str] = []

    @settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(sessions, huge_mb=1))
    def one_case(case):
        message, expected = case
        for problem in problems_of(server.exchange(message), expected):
            failures.append(f"{json.dumps(message)[:300]}: {problem}")

    one_case()
    assert failures == []
    assert "sessions" in server.request("agent/session/list", {})["result"]  # still serving
    assert {msg_id: len(answers) for msg_id, answers in server.answers.items() if len(answers) != 1} == {}
    assert server.stop() == 0


def test_readable_errors_for_bad_ids_methods_and_envelopes(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()

    too_long = server.request("agent/session/load", {"sessionId": "s" * 5000})["error"]
    assert too_long["code"] == -32602 and too_long["message"].startswith("unknown session sss")
    assert "(5000 characters)" in too_long["message"] and len(too_long["message"]) < 200
    assert str(tmp_path) not in json.dumps(too_long)
    empty = server.request("agent/inbox/remove", {"sessionId": "", "messageId": "m"})["error"]
    assert empty == {"code": -32602, "message": "sessionId: must not be empty"}
    path_like = server.request("agent/session/load", {"sessionId": "../../etc/passwd"})["error"]
    assert path_like["code"] == -32602 and "unknown session" in path_like["message"]
    nul = server.request("agent/steer", {"sessionId": "a\x00b", "content": "hi"})["error"]
    assert nul["code"] == -32602 and "unknown session" in nul["message"]
    null_params = server.request("agent/session/load", None)["error"]
    assert null_params["code"] == -32602 and "sessionId" in null_params["message"]

    for method in (None, 123, ["agent/session/list"]):
        error = server.exchange({"jsonrpc": "2.0", "method": method, "params": {}})["error"]
        assert error["code"] == -32600 and "method must be a string" in error["message"], error
    old = server.exchange({"jsonrpc": "1.0", "method": "agent/session/list", "params": {}})["error"]
    assert old == {"code": -32600, "message": 'invalid request: "jsonrpc" must be "2.0"'}
    for method in ("initialized", "textDocument/didClose", "$/setTrace"):
        error = server.request(method, {})["error"]
        assert error["code"] == -32600 and f"{method} is a notification" in error["message"]
    assert server.request("agent/nope", {})["error"]["code"] == -32601
    surrogate = server.request("agent/session/new", {"title": "\ud800"})["error"]
    assert surrogate == {"code": -32602, "message": "title: not valid Unicode (an unpaired surrogate)"}
    # an answer to a request the server never sent is not answered
    server.send({"jsonrpc": "2.0", "id": "never-asked", "result": 1})

    # ids that cannot be echoed back: the answer has id null
    for bad_id in (None, 1.5, True, [1], {"a": 1}):
        server.send({"jsonrpc": "2.0", "id": bad_id, "method": "agent/session/list", "params": {}})
    answers = server.null_id_answers(5)
    assert [a["error"]["code"] for a in answers] == [-32600] * 5
    assert all("id must be an integer or a string" in a["error"]["message"] for a in answers)
    assert server.stop() == 0
    assert "never-asked" not in server.answers
    # refusals are answers, not faults: the user's server log shows no traceback or ERROR for them
    logged = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in logged and " ERROR " not in logged, logged[-3000:]


def test_requests_in_flight_at_shutdown_are_answered_and_later_ones_refused(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()
    session = server.request("agent/session/new", {})["result"]["sessionId"]
    # sent together: none may go unanswered because `exit` follows at once
    ids = [server.next_id() for _ in range(6)]
    data = b"".join(frame({"jsonrpc": "2.0", "id": i, "method": "agent/session/load", "params": {"sessionId": session}})
                    for i in ids[:4])
    data += frame({"jsonrpc": "2.0", "id": ids[4], "method": "shutdown"})
    data += frame({"jsonrpc": "2.0", "id": ids[5], "method": "agent/session/list", "params": {}})
    data += frame({"jsonrpc": "2.0", "method": "exit"})
    server.send_raw(data)
    assert server.proc.wait(30) == 0
    for msg_id in ids[:4]:
        answer = server.answer(msg_id)
        assert "result" in answer or answer["error"]["code"] == -32800, answer  # answered, or said cancelled
    assert server.answer(ids[4])["result"] is None
    assert server.answer(ids[5])["error"] == {"code": -32600, "message": "invalid request: the server is shutting down (shutdown was received)"}
    assert all(len(a) == 1 for a in server.answers.values())


def test_bad_frames_are_answered_or_skipped_and_the_server_keeps_serving(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()
    bodies = [b"{this is not json", b"\xff\xfe not utf-8", b"[1, 2]", b"42", b'"text"', b"null"]
    server.send_raw(b"".join(frame(body) for body in bodies))
    answers = server.null_id_answers(len(bodies))
    assert [a["error"]["code"] for a in answers] == [-32700, -32700, -32600, -32600, -32600, -32600]
    assert answers[0]["error"]["message"].startswith("parse error: not JSON")
    assert "expected a JSON object, got an array" in answers[2]["error"]["message"]

    # broken headers are skipped; a length that lies is given up at the next header
    server.send_raw(b"Content-Length: -5\r\n\r\n" + b"Content-Length: abc\r\n\r\n" + b"X-Nothing: 1\r\n\r\n"
                    + b"Content-Length: 99999999999\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": \"agent/se\r\n")
    assert "sessions" in server.request("agent/session/list", {})["result"]
    oversized = server.null_id_answers(len(bodies) + 1)[-1]["error"]
    assert oversized["code"] == -32600 and "99999999999 bytes is over the limit" in oversized["message"]
    assert 99 not in server.answers
    assert server.stop() == 0


def test_non_json_numbers_and_deep_nesting_are_parse_errors_and_the_server_keeps_serving(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()
    request = b'{"jsonrpc": "2.0", "id": "bad-%d", "method": "agent/session/list", "params": {"limit": %s}}'
    bodies = [request % (1, b"NaN"), request % (2, b"Infinity"), request % (3, b"-Infinity"),
              b"[" * 100_000 + b"]" * 100_000, b'{"jsonrpc": "2.0", "id": "bad-4", "method": "agent/session/list", "params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"]
    server.send_raw(b"".join(frame(body) for body in bodies))
    answers = server.null_id_answers(len(bodies))
    assert [a["error"]["code"] for a in answers] == [-32700] * len(bodies), answers
    assert [a["error"]["message"] for a in answers[:3]] == [
        f"parse error: not JSON ({name} is not a JSON value)" for name in ("NaN", "Infinity", "-Infinity")]
    assert all(a["error"]["message"] == "parse error: not JSON (nested too deeply)" for a in answers[3:])
    assert not {"bad-1", "bad-2", "bad-3", "bad-4"} & set(server.answers)  # none of them was acted on
    # a request sent while others are in flight, with params null, is answered as alone
    session = server.request("agent/session/new", {})["result"]["sessionId"]
    ids = [server.next_id() for _ in range(8)]
    in_flight = [("agent/session/load", {"sessionId": session}), ("agent/session/list", {}),
                 ("agent/session/compact", {"sessionId": session}), ("agent/session/replay", {"sessionId": session})]
    messages = []
    for n, msg_id in enumerate(ids):
        method, params = in_flight[n // 2] if n % 2 == 0 else ("agent/session/load", None)
        messages.append({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    server.send_raw(b"".join(frame(m) for m in messages))
    for msg_id in ids[1::2]:
        assert server.answer(msg_id)["error"] == {"code": -32602, "message": "sessionId: Field required"}
    assert all("result" in server.answer(msg_id) for msg_id in ids[0::2])
    assert all(len(server.answers[msg_id]) == 1 for msg_id in ids)
    assert server.stop() == 0
    logged = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in logged, logged[-3000:]


def test_a_frame_over_the_size_limit_is_skipped_in_bounded_memory(tmp_path):
    import psutil

    server = RawServer(tmp_path)
    server.initialize()  # answered before the server has loaded
    assert "sessions" in server.request("agent/session/list", {})["result"]  # answered once it has
    time.sleep(1.0)  # and its background warm-up is done
    process = psutil.Process(server.proc.pid)
    before = process.memory_info().rss
    size = MAX_MESSAGE_BYTES + 1
    server.send_raw(b"Content-Length: %d\r\n\r\n" % size)
    chunk = b"x" * 2**20
    for _ in range(size // len(chunk)):
        server.send_raw(chunk)
    server.send_raw(b"x" * (size % len(chunk)))
    assert "sessions" in server.request("agent/session/list", {})["result"]
    (answer,) = server.null_id_answers(1)
    assert answer["error"]["code"] == -32600 and f"{size} bytes is over the limit of {MAX_MESSAGE_BYTES}" in answer["error"]["message"]
    assert process.memory_info().rss - before < MAX_MESSAGE_BYTES // 4  # never held whole
    assert server.stop() == 0


def test_over_tcp_bad_frames_are_answered_too(tmp_path):
    import os
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, AGENT_LSP_CONFIG=str(tmp_path / "none.toml"))
    server = subprocess.Popen([sys.executable, "-m", "agent_lsp", "serve", "--tcp", f"127.0.0.1:{port}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.05)
        with connection, connection.makefile("rb") as incoming:
            connection.sendall(frame(b"{not json") + frame({"jsonrpc": "1.0", "id": 7, "method": "shutdown"})
                               + frame({"jsonrpc": "2.0", "id": 8, "method": "shutdown"}))
            answers = []
            while len(answers) < 3:
                length = None
                while (line := incoming.readline()).strip() or length is None:
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                answers.append(json.loads(incoming.read(length)))
            connection.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert [(a.get("id"), a.get("error", {}).get("code")) for a in answers] == [(None, -32700), (7, -32600), (8, None)]
        assert server.wait(20) == 0
    finally:
        if server.poll() is None:
            server.kill()
