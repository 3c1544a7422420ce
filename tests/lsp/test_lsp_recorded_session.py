"""The recorded session (tests/fixtures/session.json, a real run through the
real server): the events fit the typed contract, the live stream and the
load answer tell the same story, the session file of that run loads, the
headless client renders it, and today's server still records the same
session."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from agent_lsp.agent import Agent, AgentOptions
from agent_lsp.agent.durable_events import DURABLE_EVENTS
from agent_lsp.agent.live_events import LIVE_EVENTS
from agent_lsp.cli.transcript import Transcript
from agent_lsp.lsp import protocol as wire
from agent_lsp.store import SessionStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
sys.path.insert(0, str(FIXTURES))
RECORDING = json.loads((FIXTURES / "session.json").read_text(encoding="utf-8"))


def live_stream() -> list[dict]:
    return [e for method, p in RECORDING["notifications"] if method == "session/event" for e in p["events"]]


def strict(model, data: dict, where: str) -> None:
    parsed = model.model_validate(data)
    assert not parsed.model_extra, f"{where}: fields its model does not name: {sorted(parsed.model_extra)}"


def test_every_recorded_event_and_notification_fits_its_model():
    for event in RECORDING["load"]["events"]:
        assert event["type"] in DURABLE_EVENTS, event["type"]
        strict(DURABLE_EVENTS[event["type"]], event["data"], f"seq {event['seq']} {event['type']}")
    for method, params in RECORDING["notifications"]:
        model = wire.SERVER_NOTIFICATIONS[method]
        model.model_validate(params)
        if method != "session/event":
            data = {k: v for k, v in params.items() if k != "sessionId"}
            strict(LIVE_EVENTS[method], data, method)
    assert {m for m, _ in RECORDING["notifications"]} >= {"agent/inbox/inserted", "agent/inbox/discarded",
                                                          "agent/inbox/claimed", "agent/status"}


def test_the_live_stream_covers_every_seq_once_and_its_merged_chunks_join_the_deltas():
    loaded = {e["seq"]: e for e in RECORDING["load"]["events"]}
    covered: list[int] = []
    merged = 0
    for event in live_stream():
        last = event.get("lastSeq", event["seq"])
        covered += range(event["seq"], last + 1)
        if "lastSeq" in event:
            merged += 1
            joined = "".join(loaded[s]["data"]["chunk"]["text"] for s in range(event["seq"], last + 1))
            assert event["data"]["chunk"]["text"] == joined
        else:
            assert event == loaded[event["seq"]]
    assert merged > 0, "the recording has no coalesced chunk: record it again"
    # The turn/revert of the last request is durable; the client sees it live too.
    assert covered == sorted(loaded)


def test_the_recorded_session_file_loads_as_the_same_events(tmp_path):
    sid = RECORDING["sessionId"]
    (tmp_path / f"{sid}.jsonl").write_text("\n".join(RECORDING["sessionFile"]) + "\n", encoding="utf-8")
    session = SessionStore(tmp_path).load(sid)
    recorded = RECORDING["load"]["events"]
    assert [e.to_json() for e in session.events[: len(recorded)]] == recorded
    assert [e.type for e in session.events[len(recorded):]] == ["session/end-seed"]  # a cold load marks the seed
    agent = Agent(session, providers={}, options=AgentOptions(provider="scripted", model="m"))
    assert agent.inbox.next_turn == agent.inbox.next_step == []  # the steer was discarded by the cancel


def test_the_headless_client_renders_the_recorded_session():
    out, err = io.StringIO(), io.StringIO()
    transcript = Transcript(out, err, color=False)
    for event in live_stream():
        transcript.event(event)
    text = out.getvalue()
    assert transcript.text.startswith("Reading both files.Fixing the bug.Running the tests.")
    assert "Answer after the retry." in transcript.text and "Working on it" in transcript.text
    for call in ("read_file calc.py", "read_file notes.md", "edit_file calc.py", "run_command"):
        assert call in text, call
    assert "Permission denied" in text
    diagnostics = err.getvalue()
    assert "RATE_LIMIT" in diagnostics and "aborted" in diagnostics and "compacted" in diagnostics


async def test_todays_server_records_the_same_session(tmp_path):
    from record_session import record

    again = await record(tmp_path)
    assert [e["type"] for e in again["load"]["events"]] == [e["type"] for e in RECORDING["load"]["events"]], (
        "the server records a different session now: rerun tests/fixtures/record_session.py"
    )
