"""Damaged copies of a real session file (tests/fixtures/session.json), each
opened through the real server: what can be read is shown read-only, with a
warning that names the file and the line; what cannot says why, by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_fuzzing import RawServer

FIXTURE = json.loads((Path(__file__).parent.parent / "fixtures" / "session.json").read_text(encoding="utf-8"))
LINES = [line.encode() for line in FIXTURE["sessionFile"]]
DAMAGED_LINE = 93  # the first turn's second assistant/message; the events before it are seqs 0..90
SESSION_DAMAGED = -32012


def _with_line(replace) -> bytes:
    lines = list(LINES)
    lines[DAMAGED_LINE - 1] = replace(lines[DAMAGED_LINE - 1])
    return b"\n".join(lines) + b"\n"


def _without_type(line: bytes) -> bytes:
    event = json.loads(line)
    del event["type"]
    return json.dumps(event).encode()


MID_FILE = {
    "garbage": _with_line(lambda line: b"}{ not an event"),
    "wrong-seq": _with_line(lambda line: line.replace(b'"seq":91,', b'"seq":7,', 1)),
    "nul-bytes": _with_line(lambda line: line[:40] + b"\x00\x00" + line[40:]),
    "invalid-utf8": _with_line(lambda line: line.replace(b'"type"', b'"ty\xff\xfepe"', 1)),
    "no-type": _with_line(_without_type),
    "blank-line": _with_line(lambda line: b""),
}
UNREADABLE = {
    "empty": b"",
    "bad-header": b"{not a header\n" + b"\n".join(LINES[1:]) + b"\n",
    "foreign-header": b'{"kind": "something.else"}\n' + b"\n".join(LINES[1:]) + b"\n",
}


@pytest.fixture
def server(tmp_path):
    server = RawServer(tmp_path)
    server.initialize()
    created = server.request("agent/session/new", {})["result"]["sessionId"]
    (sessions_dir,) = {path.parent for path in (tmp_path / "sessions").rglob(f"{created}.jsonl")}
    server.sessions_dir = sessions_dir
    yield server
    assert server.stop() == 0


def _copy(server: RawServer, name: str, data: bytes) -> tuple[str, Path]:
    session_id = f"s_damaged_{name}"
    path = server.sessions_dir / f"{session_id}.jsonl"
    path.write_bytes(data.replace(FIXTURE["sessionId"].encode(), session_id.encode(), 1))  # its header names it
    return session_id, path


@pytest.mark.parametrize("name", sorted(MID_FILE))
def test_a_session_damaged_mid_file_opens_up_to_the_damage_read_only_with_a_warning(server, tmp_path, name):
    session_id, path = _copy(server, name, MID_FILE[name])
    written = path.read_bytes()
    answer = server.request("agent/session/load", {"sessionId": session_id})
    assert "result" in answer, answer
    loaded = answer["result"]
    assert [e["seq"] for e in loaded["events"]] == list(range(91))
    assert loaded["events"] == FIXTURE["load"]["events"][:91]
    assert loaded["problem"].startswith(f"session file {session_id}.jsonl is damaged at line {DAMAGED_LINE}: ")
    assert str(tmp_path) not in loaded["problem"]
    warning = server.notification("window/showMessage", lambda p: session_id in p["message"])
    assert warning["type"] == 2 and f"line {DAMAGED_LINE}" in warning["message"]
    page = server.request("agent/session/replay", {"sessionId": session_id, "direction": "backward"})["result"]
    assert page["endSeq"] == 91 and page["problem"] == loaded["problem"]
    # read-only: a request that would change it is refused by name, and the file is left exactly as it was
    refused = server.request("agent/followup", {"sessionId": session_id, "content": "go on"})["error"]
    assert refused["code"] == SESSION_DAMAGED and f"{session_id}.jsonl" in refused["message"]
    assert refused["data"] == {"sessionId": session_id, "file": f"{session_id}.jsonl", "line": DAMAGED_LINE}
    assert path.read_bytes() == written
    # listed with its problem, also where the listing's quick scan reads past the damage
    listed = {s["sessionId"]: s for s in server.request("agent/session/list", {})["result"]["sessions"]}
    assert listed[session_id]["problem"].startswith(f"session file {session_id}.jsonl is damaged at line {DAMAGED_LINE}: ")


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_a_session_with_nothing_readable_is_listed_with_its_problem_and_refused_by_name(server, tmp_path, name):
    session_id, path = _copy(server, name, UNREADABLE[name])
    written = path.read_bytes()
    error = server.request("agent/session/load", {"sessionId": session_id})["error"]
    assert error["code"] == SESSION_DAMAGED, error
    assert error["message"].startswith(f"session file {session_id}.jsonl is damaged at line 1: ")
    assert error["data"] == {"sessionId": session_id, "file": f"{session_id}.jsonl", "line": 1}
    assert str(tmp_path) not in json.dumps(error)
    listed = {s["sessionId"]: s for s in server.request("agent/session/list", {})["result"]["sessions"]}
    assert listed[session_id]["problem"].startswith(f"session file {session_id}.jsonl is damaged at line 1: ")
    assert path.read_bytes() == written


def test_every_damaged_copy_is_listed_beside_the_good_sessions(server):
    for name, data in {**MID_FILE, **UNREADABLE}.items():
        _copy(server, name, data)
    listed = {s["sessionId"]: s for s in server.request("agent/session/list", {})["result"]["sessions"]}
    assert {f"s_damaged_{name}" for name in {**MID_FILE, **UNREADABLE}} <= listed.keys()
    assert sum(1 for s in listed.values() if not s.get("problem")) >= 1  # the good session, listed as before


def test_a_damaged_stream_chunk_line_opens_up_to_it_too(server):
    lines = list(LINES)
    lines[11] = lines[11][:60] + b"\x00" + lines[11][60:]  # line 12: seq 10, a text delta
    session_id, path = _copy(server, "chunk", b"\n".join(lines) + b"\n")
    loaded = server.request("agent/session/load", {"sessionId": session_id})
    assert "result" in loaded, loaded
    assert [e["seq"] for e in loaded["result"]["events"]] == list(range(10))
    assert loaded["result"]["problem"].startswith(f"session file {session_id}.jsonl is damaged at line 12: ")
    # a replay page merges the deltas from their text alone: it is answered (with or without the problem)
    assert "result" in server.request("agent/session/replay", {"sessionId": session_id})
    # read-only from then on, as a session damaged elsewhere, and listed with its problem
    refused = server.request("agent/followup", {"sessionId": session_id, "content": "go on"})["error"]
    assert refused["code"] == SESSION_DAMAGED and refused["data"]["line"] == 12
    listed = {s["sessionId"]: s for s in server.request("agent/session/list", {})["result"]["sessions"]}
    assert listed[session_id]["problem"].startswith(f"session file {session_id}.jsonl is damaged at line 12: ")


def test_a_header_field_out_of_range_is_named_too(server):
    header = json.loads(LINES[0])
    header["seedLength"] = 10_000
    session_id, _ = _copy(server, "seed-length", json.dumps(header).encode() + b"\n" + b"\n".join(LINES[1:]) + b"\n")
    loaded = server.request("agent/session/load", {"sessionId": session_id})["result"]
    assert len(loaded["events"]) == len(LINES) - 1
    assert loaded["problem"] == f"session file {session_id}.jsonl is damaged at line 1: invalid seedLength 10000"
