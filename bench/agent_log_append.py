"""Events appended per second to the JSONL log with batched writes (target: >= 50,000/s).
Run: .venv/bin/python bench/agent_log_append.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from agent_lsp.store import SessionStore

N = 200_000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # every 1000 events: a checkpoint; every 10: the write before a send to a client (at most
        # one per relay flush, i.e. per 4 ms; 10 events per write is a slow stream's worst case)
        for fsync, every in ((False, 1000), (True, 1000), (False, 10)):
            store = SessionStore(Path(tmp) / f"fsync_{fsync}_{every}", fsync=fsync)
            session = store.create()
            chunk = {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "token"}}
            t0 = time.perf_counter()
            c0 = time.process_time()
            for i in range(N):
                session.append("assistant/chunk", chunk)
                if i % every == every - 1:
                    session.flush()
            session.flush()
            elapsed = time.perf_counter() - t0
            cpu = time.process_time() - c0
            size = store.path_of(session.id).stat().st_size
            print(f"fsync={fsync!s:5s} write every {every:4d}: {N} events in {elapsed:.3f} s = {N / elapsed:,.0f} events/s "
                  f"(CPU {N / cpu:,.0f}/s; {size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
