"""The SSE decoder gives the same events however the bytes are cut."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_lsp.llm.sse import SseDecoder, SseEvent
from llm_fake_server import RECORDINGS, recording


def decode(parts: list[bytes]) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for part in parts:
        events.extend(decoder.feed(part))
    events.extend(decoder.close())
    return events


def with_line_ends(data: bytes, end: bytes) -> bytes:
    return data.replace(b"\n", end)


SAMPLE = "event: greet\ndata: héllo 世界 🌍\ndata: second line\n\n: comment\ndata:no-space\n\ndata: [DONE]\n\n".encode()


def test_fields_comments_and_multiline_data():
    assert decode([SAMPLE]) == [
        SseEvent("greet", "héllo 世界 🌍\nsecond line"),
        SseEvent(None, "no-space"),
        SseEvent(None, "[DONE]"),
    ]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_every_single_cut_point_gives_the_same_events(end):
    data = with_line_ends(SAMPLE, end)
    whole = decode([data])
    assert len(whole) == 3
    for cut in range(1, len(data)):
        assert decode([data[:cut], data[cut:]]) == whole, f"cut at {cut}"


def test_byte_by_byte_crlf_split_between_cr_and_lf():
    data = with_line_ends(SAMPLE, b"\r\n")
    assert decode([bytes([b]) for b in data]) == decode([data])


def test_lone_cr_then_lf_in_next_chunk_is_one_line_end():
    # "\r" at a chunk end then "\n": one line end, not an extra blank line (which would
    # end the event early and drop the second data line).
    assert decode([b"data: a\r", b"\ndata: b\r\n\r\n"]) == [SseEvent(None, "a\nb")]


def test_unterminated_event_at_close_is_dropped():
    assert decode([b"data: complete\n\ndata: half"]) == [SseEvent(None, "complete")]


def test_id_field_is_kept():
    assert decode([b"id: 7\ndata: x\n\n"]) == [SseEvent(None, "x", "7")]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_cuts_of_every_recording(data):
    name = data.draw(st.sampled_from(sorted(p.name for p in RECORDINGS.glob("*.sse"))))
    end = data.draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    raw = with_line_ends(recording(name), end)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(raw) - 1)), max_size=40)))
    parts = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
    assert decode(parts) == decode([raw])


def test_byte_order_mark_is_skipped_even_when_split():
    bom = "\ufeff".encode()
    assert decode([bom[:1], bom[1:] + b"data: x\n\n"]) == [SseEvent(None, "x")]
