"""The ACP face keeps serving whatever a client writes: every line with a
readable id gets exactly one answer with the right code, a line that is not a
message is answered with `id: null`, and the process stays alive (a seeded,
bounded fuzz of the real `agent-lsp acp`, beside tests/lsp/test_lsp_fuzz.py)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings

from acp_fuzzing import RawAgent, cases, problems_of
from agent_lsp.acp.transport import MAX_LINE_BYTES


def test_fuzzed_lines_each_get_exactly_one_right_answer(tmp_path):
    agent = RawAgent(tmp_path)
    agent.initialize()
    sessions = [agent.new_session() for _ in range(3)]
    failures: list[str] = []

    @settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(agent.workspace, sessions))
    def one_case(case):
        line, expected, id_readable = case
        for problem in problems_of(agent.exchange(line, id_readable), expected, id_readable):
            shown = line[:300] if isinstance(line, bytes) else json.dumps(line)[:300]
            failures.append(f"{shown!r}: {problem}")

    one_case()
    assert failures == [], "\n".join(failures)
    assert "sessions" in agent.request("session/list", {})["result"]  # still serving
    assert {msg_id: len(answers) for msg_id, answers in agent.answers.items() if len(answers) != 1} == {}
    assert agent.stop() == 0
    assert "Traceback" not in agent.log(), agent.log()[-3000:]


def test_lines_that_are_not_messages_are_answered_and_the_agent_keeps_serving(tmp_path):
    agent = RawAgent(tmp_path)
    agent.initialize()
    lines = [b"42", b"[1, 2]", b'[{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}]', b'"text"',
             b"null", b"{this is not json", b"\xff\xfe not utf-8",
             b'{"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"_meta": %s}}' % (b"[" * 1000 + b"]" * 1000)]
    for line in lines:
        agent.send_line(line)
    assert "sessions" in agent.request("session/list", {})["result"]
    answers = agent.null_id_answers(len(lines))
    assert [a["error"]["code"] for a in answers] == [-32600] * 5 + [-32700] * 3
    assert all(a["id"] is None and a["jsonrpc"] == "2.0" for a in answers)
    assert answers[0]["error"]["message"] == "invalid request: expected a JSON object, got a number"
    assert answers[2]["error"]["message"] == "invalid request: expected a JSON object, got an array"
    assert answers[5]["error"]["message"].startswith("parse error: not JSON (")
    assert answers[7]["error"]["message"] == "parse error: not JSON (nested too deeply)"

    # the envelope is checked as the LSP face checks it; the answer keeps the id where it can
    old = agent.exchange({"jsonrpc": "1.0", "method": "session/list", "params": {}}, id_readable=True)["error"]
    assert old == {"code": -32600, "message": 'invalid request: "jsonrpc" must be "2.0"'}
    number = agent.exchange({"jsonrpc": "2.0", "method": 7, "params": {}}, id_readable=True)["error"]
    assert number == {"code": -32600, "message": "invalid request: method must be a string, got a number"}
    listed = agent.exchange({"jsonrpc": "2.0", "id": [1], "method": "session/list", "params": {}}, id_readable=False)
    assert listed["error"]["message"] == "invalid request: id must be an integer or a string, got an array"
    agent.send({"jsonrpc": "2.0", "method": 7})  # a broken notification: nobody to answer, dropped
    assert "sessions" in agent.request("session/list", {})["result"]
    assert agent.stop() == 0
    assert "Traceback" not in agent.log()


def test_a_line_over_the_size_limit_is_skipped_in_bounded_memory(tmp_path):
    import psutil

    agent = RawAgent(tmp_path)
    agent.initialize()
    assert "sessions" in agent.request("session/list", {})["result"]
    process = psutil.Process(agent.proc.pid)
    before = process.memory_info().rss
    size = MAX_LINE_BYTES + 1
    chunk = b"x" * 2**20
    assert agent.proc.stdin is not None
    for _ in range(size // len(chunk)):
        agent.proc.stdin.write(chunk)
    agent.send_line(b"x" * (size % len(chunk)))  # the newline ends it
    assert "sessions" in agent.request("session/list", {})["result"]
    (answer,) = agent.null_id_answers(1)
    assert answer["error"] == {"code": -32600, "message": f"invalid request: a message of {size + 1} bytes is over the "
                                                          f"limit of {MAX_LINE_BYTES}; skipped"}
    assert process.memory_info().rss - before < MAX_LINE_BYTES // 4  # dropped, not kept
    assert agent.stop() == 0


def test_bad_session_ids_and_text_get_readable_refusals(tmp_path):
    agent = RawAgent(tmp_path)
    agent.initialize()
    session = agent.new_session()
    ws = str(agent.workspace)

    too_long = agent.request("session/load", {"sessionId": "s" * 5000, "cwd": ws, "mcpServers": []})["error"]
    assert too_long["code"] == -32602 and too_long["message"].startswith("unknown session sss")
    assert "(5000 characters)" in too_long["message"] and len(too_long["message"]) < 300
    empty = agent.request("session/load", {"sessionId": "", "cwd": ws, "mcpServers": []})["error"]
    assert (empty["code"], empty["message"]) == (-32602, "sessionId: must not be empty")
    for odd in ("../../etc/passwd", "a\x00b", ".hidden"):
        refused = agent.request("session/load", {"sessionId": odd, "cwd": ws, "mcpServers": []})["error"]
        assert refused["code"] == -32602 and refused["message"].startswith("unknown session"), refused
    steer = agent.request("_agent-lsp/steer", {"sessionId": "s" * 5000, "prompt": "hi"})["error"]
    assert steer["code"] == -32602 and len(steer["message"]) < 300

    # text JSON escapes as half a UTF-16 pair: refused, naming where, as the LSP face does
    prompt = agent.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "a\ud800b"}]})
    assert prompt["error"] == {"code": -32602, "message": "prompt.0.text: not valid Unicode (an unpaired surrogate)"}
    steered = agent.request("_session/steering", {"sessionId": session, "prompt": "\udc00"})["error"]
    assert steered == {"code": -32602, "message": "prompt: not valid Unicode (an unpaired surrogate)"}
    fine = agent.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "fine 🧪"}]})
    assert fine["result"] == {"stopReason": "end_turn"}
    assert agent.stop() == 0
    assert "Traceback" not in agent.log(), agent.log()[-3000:]
