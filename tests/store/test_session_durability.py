"""How soon appended events reach the session file without an explicit flush."""

from __future__ import annotations

import asyncio
import time

from agent_lsp.store import SessionStore
from agent_lsp.store.session import MAX_DELAY_S, write_pending


def stored_types(store: SessionStore, session_id: str) -> list[str]:
    return [e.type for e in store.snapshot(session_id)[1]]


async def test_an_event_nobody_flushes_is_written_within_the_time_bound(tmp_path):
    store = SessionStore(tmp_path)
    session = store.create()
    session.append("assistant/chunk", {"chunk": {"type": "text-delta", "text": "a"}})
    assert stored_types(store, session.id) == []  # buffered
    started = time.monotonic()
    while stored_types(store, session.id) != ["assistant/chunk"]:
        assert time.monotonic() - started < MAX_DELAY_S + 5, "never written"
        await asyncio.sleep(0.01)


def test_write_pending_writes_every_session_with_buffered_events(tmp_path):
    store = SessionStore(tmp_path)
    first, second = store.create(), store.create()
    first.append("a", {})
    second.append("b", {})
    write_pending()
    assert stored_types(store, first.id) == ["a"] and stored_types(store, second.id) == ["b"]


def test_a_deleted_session_is_not_recreated_by_a_pending_write(tmp_path):
    store = SessionStore(tmp_path)
    session = store.create()
    session.append("a", {})
    assert store.delete(session.id)
    write_pending()
    assert not store.path_of(session.id).exists()
