"""A session's events in pages, streamed deltas merged (what a client redraws).

A page is a range of the log `[start, next)` that never splits a run of
consecutive deltas of one kind (text or reasoning; such runs are always of one
step, a step boundary being an event of its own). Each run is one event, the
form live coalescing gives a chunk (the first delta's `seq`, `lastSeq` = the
last one's, `chunk.text` their concatenation), so a client renders a page as
it renders live notifications. Released chunks are read from the session file
one segment at a time and merged while read: a page costs its own size in
memory, not the session's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agent_lsp.store.event_log import EventLog, NOT_MERGEABLE

DEFAULT_LIMIT = 200
# A page ends once it covers this much of the log, so that one answer stays
# small and quick however long the session's messages are (at least one event).
PAGE_BYTES = 2 << 20
_RUN = re.compile(rb"\x01+|\x02+")  # a run of deltas of one kind in EventLog.kinds
# The text of a delta line as the writer makes it (`{"type":..,"text":..}` closing
# the chunk, the data and the event), as a JSON string literal.
_DELTA_TEXT = re.compile(rb'"chunk":\{"type":"(?:text|reasoning)-delta","text":("[^"\\\n]*(?:\\.[^"\\\n]*)*")\}\}\}\n')


@dataclass(frozen=True)
class Page:
    events: list[dict[str, Any]]  # wire events, runs of deltas merged
    start: int  # the seq of the page's first event
    next: int  # the seq after its last
    end: int  # the length of the log when read


def page_forward(log: EventLog, start: int = 0, limit: int = DEFAULT_LIMIT) -> Page:
    """Up to `limit` events from seq `start` on."""
    n = len(log)
    start = min(max(start, 0), n)
    kinds, offsets = log.kinds, log.offsets
    budget = PAGE_BYTES
    i, count = start, 0
    while i < n and count < limit:
        log.know(i)
        j = _run_end(kinds, i)
        if count and offsets and j < len(offsets) and offsets[j] - offsets[start] > budget:
            break
        count += 1
        i = j
    return Page(_materialise(log, start, i), start, i, n)


def page_backward(log: EventLog, before: int | None = None, limit: int = DEFAULT_LIMIT) -> Page:
    """Up to `limit` events ending just before seq `before` (default: the newest)."""
    n = len(log)
    end = n if before is None else min(max(before, 0), n)
    kinds, offsets = log.kinds, log.offsets
    budget = PAGE_BYTES
    i, count = end, 0
    while i > 0 and count < limit:
        j = i - 1
        log.know(j)
        kind = kinds[j]
        if kind != NOT_MERGEABLE:
            while j > 0 and kinds[j - 1] == kind:
                j -= 1
        if count and offsets and end < len(offsets) and offsets[end] - offsets[j] > budget:
            break
        count += 1
        i = j
    return Page(_materialise(log, i, end), i, end, n)


def _run_end(kinds: bytearray, i: int) -> int:
    if kinds[i] == NOT_MERGEABLE:
        return i + 1
    m = _RUN.match(kinds, i)
    return m.end() if m else i + 1


def _materialise(log: EventLog, start: int, stop: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    kinds = log.kinds
    seq = start
    plain = start  # the start of the stretch of events that are not runs, not yet added
    while seq < stop:
        log.know(seq)
        end = min(_run_end(kinds, seq), stop)
        if end - seq > 1:
            out.extend(e.to_json() for e in log.iter_range(plain, seq))
            out.extend(_merge_run(log, seq, end))
            plain = end
        seq = end
    out.extend(e.to_json() for e in log.iter_range(plain, stop))
    return out


def _merge_run(log: EventLog, start: int, stop: int) -> list[dict[str, Any]]:
    """Deltas `start..stop-1` of one kind as one event. Lines of the usual shape
    give their texts to one parse of the string literals alone; anything else is
    parsed whole and merged by the chunk types it holds."""
    if log.held_range(start, stop):
        return _merge_events(list(log.iter_range(start, stop)))
    raw = log.raw_lines(start, stop)
    texts = _DELTA_TEXT.findall(raw)
    if len(texts) == stop - start:
        first = json.loads(raw[: raw.find(b"\n")])
        text = "".join(json.loads(b"[" + b",".join(texts) + b"]"))
        return [_merged(first, text, stop - 1)]
    return _merge_events(list(log.iter_range(start, stop)))


def _merge_events(events: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(events):
        first = events[i]
        kind = (first.data.get("chunk") or {}).get("type")
        j = i + 1
        if kind in ("text-delta", "reasoning-delta"):
            while j < len(events) and (events[j].data.get("chunk") or {}).get("type") == kind:
                j += 1
        if j - i == 1:
            out.append(first.to_json())
        else:
            text = "".join(e.data["chunk"].get("text", "") for e in events[i:j])
            out.append(_merged(first.to_json(), text, events[j - 1].seq))
        i = j
    return out


def _merged(first: dict[str, Any], text: str, last: int) -> dict[str, Any]:
    data = dict(first["data"])
    data["chunk"] = {**data["chunk"], "text": text}
    return {**first, "data": data, "lastSeq": last}
