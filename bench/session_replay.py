"""Reopening long sessions, and memory while one streams: through the real server over LSP.

    .venv/bin/python bench/session_replay.py [--turns 50] [--deltas 2000]

1. Streams --turns turns of --deltas text deltas each (the scripted model, one
   delta per character) into one session and prints the server's RSS after
   turns 1, 10 and the last, next to its idle RSS (target: flat, <= idle + 10 MB
   after 50 such turns). Copies of the session file taken after 3 and 10 turns
   give the 6k- and 20k-event sessions of part 2.
2. For each session (about 6k, 20k, 100k events), a fresh server (nothing in
   memory) reopens it twice:
   - paged, as the clients do: `agent/session/replay` backward from the end
     (the newest screenful: 50 events), then the older pages until the start;
   - whole: one `agent/session/load` (older clients).
   Printed: time to the first page, time to the whole transcript, peak server
   RSS above idle, beside the targets (100k: first page <= 150 ms, whole
   <= 1 s, peak <= idle + 30 MB; 20k <= 0.3 s; 6k <= 0.1 s).
Times are wall clock from the request sent to the answer parsed by the client.
Each fresh server first answers one `agent/session/new` (the first agent of a
process imports the agent's modules; that time is printed apart, it is the
first-session figure of bench/server_start.py, not the reopening's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from server_bench import Bench, RssSampler

MB = 2**20
TARGETS = {"6k": (None, 0.1, None), "20k": (None, 0.3, None), "100k": (0.150, 1.0, 30)}
SCREENFUL = 50


async def stream_turns(workspace: Path, sessions: Path, cache: Path, turns: int, deltas: int) -> dict[str, str]:
    """Part 1; returns {label: session id} of the sessions part 2 reopens."""
    bench = Bench(workspace, sessions, [{"text": "x" * deltas}] * turns, cache)
    await bench.start()
    await bench.roundtrip()
    await asyncio.sleep(0.5)  # the background warm-up
    process = psutil.Process(bench.pid)
    idle = process.memory_info().rss
    rss: dict[int, int] = {}
    copies: dict[str, str] = {}
    sid = None
    for turn in range(1, turns + 1):
        bench.idle_at.clear()
        params = {"content": f"turn {turn}"} | ({"sessionId": sid} if sid else {})
        result = await bench.client.protocol.send_request_async("agent/followup", params)
        sid = result["sessionId"]
        if sid not in bench.idle_at:
            bench.waiters[sid] = asyncio.get_running_loop().create_future()
            await asyncio.wait_for(bench.waiters[sid], 300)
        if turn in (1, 10, turns):
            await asyncio.sleep(0.3)  # the log's batch write and the relay's last flush
            rss[turn] = process.memory_info().rss
        if turn in (3, 10):
            await asyncio.sleep(0.3)
            copies[{3: "6k", 10: "20k"}[turn]] = _copy_session(sessions, sid)
    copies["100k"] = sid
    await bench.stop()
    print(f"memory while a session streams ({deltas:,} deltas a turn): server RSS idle {idle / MB:.1f} MB")
    for turn, value in rss.items():
        mark = "  (target <= idle + 10 MB)" if turn == turns else ""
        print(f"  after {turn:>2} turns: {value / MB:.1f} MB (idle + {(value - idle) / MB:.1f} MB){mark}")
    return copies


def _copy_session(sessions: Path, sid: str) -> str:
    """A copy of the session's file as it is now, under a new id (its own session)."""
    source = next(sessions.glob(f"*/{sid}.jsonl"))
    new_id = f"s_{int(time.time() * 1000):x}_{secrets.token_hex(4)}"
    header, rest = source.read_bytes().split(b"\n", 1)
    head = json.loads(header)
    head["id"] = new_id
    (source.parent / f"{new_id}.jsonl").write_bytes(json.dumps(head).encode() + b"\n" + rest)
    return new_id


async def reopen(workspace: Path, sessions: Path, cache: Path, sid: str, paged: bool) -> tuple[float, float, int, int, int, float]:
    """(first page s, whole s, peak RSS above idle, events, bytes received, first
    session s) on a fresh server that has made one new session (the first agent
    of a server loads the agent's modules: measured apart, as `first session`)."""
    bench = Bench(workspace, sessions, [], cache)
    await bench.start()
    await bench.roundtrip()
    await asyncio.sleep(0.5)
    request = bench.client.protocol.send_request_async
    sent = time.perf_counter()
    await request("agent/session/new", {})
    first_session = time.perf_counter() - sent
    idle = psutil.Process(bench.pid).memory_info().rss
    events = 0
    received = 0
    with RssSampler(bench.pid) as sampler:
        sent = time.perf_counter()
        if paged:
            page = await request("agent/session/replay", {"sessionId": sid, "direction": "backward", "limit": SCREENFUL})
            first = time.perf_counter() - sent
            events += len(page["events"])
            received += len(json.dumps(page["events"]))
            while page["startSeq"] > 0:
                page = await request("agent/session/replay", {"sessionId": sid, "direction": "backward",
                                                              "seq": page["startSeq"], "limit": 1000})
                events += len(page["events"])
                received += len(json.dumps(page["events"]))
            whole = time.perf_counter() - sent
        else:
            result = await request("agent/session/load", {"sessionId": sid})
            first = whole = time.perf_counter() - sent
            events = len(result["events"])
            received = len(json.dumps(result["events"]))
    await bench.stop()
    return first, whole, max(sampler.peak - idle, 0), events, received, first_session


def _beside(value: float, target: float | None, unit: str = "s") -> str:
    if target is None:
        return ""
    return f" (target <= {target * 1000:.0f} ms)" if unit == "ms" else f" (target <= {target:g} s)"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3, help="reopenings per session and way (the median is printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        sessions, cache = root / "sessions", root / "cache"
        copies = await stream_turns(workspace, sessions, cache, args.turns, args.deltas)
        print("reopening a session on a fresh server that made one new session first (median of "
              f"{args.runs}; peak = server RSS above its RSS before the request):")
        first_sessions = []
        for label, sid in copies.items():
            size = next(sessions.glob(f"*/{sid}.jsonl")).stat().st_size
            first_target, whole_target, rss_target = TARGETS[label]
            for paged in (True, False):
                runs = [await reopen(workspace, sessions, cache, sid, paged) for _ in range(args.runs)]
                first = statistics.median(r[0] for r in runs)
                whole = statistics.median(r[1] for r in runs)
                peak = statistics.median(r[2] for r in runs)
                events, received = runs[0][3], runs[0][4]
                first_sessions += [r[5] for r in runs]
                way = "paged (agent/session/replay)" if paged else "whole (agent/session/load) "
                line = f"  {label:>4} events ({size / MB:.1f} MB file) {way}: "
                if paged:
                    line += f"first page {first * 1000:.0f} ms{_beside(first, first_target, 'ms')}, "
                line += (f"whole {whole:.2f} s{_beside(whole, whole_target)}, peak +{peak / MB:.1f} MB"
                         f"{f' (target <= +{rss_target} MB)' if rss_target else ''}; "
                         f"{events:,} events, {received / MB:.1f} MB of events received")
                print(line)
        print(f"  (the first agent/session/new of each fresh server, before these: median "
              f"{statistics.median(first_sessions) * 1000:.0f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
