"""Reload + crash repair time for a 100,000-event session (target: < 1.5 s).
The session ends in an open turn with a pending tool call, so repair runs.
Times are process CPU time (stable on a loaded machine).
Run: .venv/bin/python bench/agent_reload.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from agent_lsp.agent.history import derive_messages
from agent_lsp.agent.inbox import Inbox
from agent_lsp.store import SessionStore

N = 100_000


def build(store: SessionStore) -> str:
    s = store.create()
    turn = 0
    while len(s.events) < N - 10:
        turn += 1
        s.append("turn/start", {"turn": turn})
        s.append("step/start", {"turn": turn, "step": 1})
        s.append("user/message", {"turn": turn, "step": 1, "surfaceOp": "append", "message": {
            "role": "user", "id": f"m{turn}", "source": "user", "content": [{"type": "text", "text": "question"}]}})
        seqs = [s.append("assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "text": "w"}}).seq
                for _ in range(40)]
        s.append("assistant/message", {"turn": turn, "step": 1, "surfaceOp": "append", "sourceEventSeqs": seqs,
                                       "message": {"role": "assistant", "content": [{"type": "text", "text": "w" * 40}]}})
        s.append("step/end", {"turn": turn, "step": 1})
        s.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    turn += 1
    s.append("turn/start", {"turn": turn})
    s.append("step/start", {"turn": turn, "step": 1})
    s.append("assistant/message", {"turn": turn, "step": 1, "surfaceOp": "append", "sourceEventSeqs": [],
                                   "message": {"role": "assistant", "content": [
                                       {"type": "tool-call", "id": "c1", "name": "shell", "arguments": "{}"}]}})
    s.append("tool/call", {"turn": turn, "step": 1, "callId": "c1", "name": "shell", "arguments": "{}"})
    s.flush()
    return s.id


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sid = build(SessionStore(Path(tmp)))
        size = (Path(tmp) / f"{sid}.jsonl").stat().st_size
        store = SessionStore(Path(tmp))
        t0 = time.process_time()
        session = store.load(sid)
        t1 = time.process_time()
        Inbox(session, lambda name, payload: None).rebuild(session.events)
        history = derive_messages(session)
        t2 = time.process_time()
        print(f"{len(session.events):,} events ({size / 1e6:.1f} MB): load + repair {t1 - t0:.3f} s; "
              f"inbox rebuild + derive history ({len(history)} messages) {t2 - t1:.3f} s; total {t2 - t0:.3f} s")
        t3 = time.process_time()
        listed = store.list()
        print(f"list() of that session: {time.process_time() - t3:.3f} s ({listed[0].turns} turns)")


if __name__ == "__main__":
    main()
