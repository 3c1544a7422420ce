"""Long fuzz of the server's JSON-RPC surface: prints counts, asserts nothing.

    .venv/bin/python bench/lsp_fuzz.py [--examples 5000] [--huge-mb 10] [--seed 0]

The same cases as tests/lsp/test_lsp_fuzz.py (built from the protocol's models:
wrong types, missing and extra fields, huge and odd strings, unknown ids,
broken envelopes, unknown methods), many more of them, with strings of up to
--huge-mb MB. Prints how many messages were sent, answered once, answered
more than once or not at all, the answers by error code, the cases whose
answer was wrong, and the server's RSS before and after (target: every
message answered exactly once with the right code; memory bounded).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

import psutil
from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "lsp"))
from lsp_fuzzing import RawServer, cases, problems_of  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--huge-mb", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp_dir:
        server = RawServer(Path(tmp_dir))
        server.initialize()
        sessions = [server.request("agent/session/new", {})["result"]["sessionId"] for _ in range(5)]
        process = psutil.Process(server.proc.pid)
        rss_before = process.memory_info().rss
        codes: collections.Counter[str] = collections.Counter()
        wrong: list[str] = []
        sent = unanswered = 0
        peak = rss_before
        started = time.perf_counter()

        @seed(args.seed)
        @settings(max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(cases(sessions, huge_mb=args.huge_mb))
        def one_case(case):
            nonlocal sent, unanswered, peak
            message, expected = case
            sent += 1
            try:
                answer = server.exchange(message, timeout=10.0)
            except AssertionError:
                unanswered += 1
                return
            error = answer.get("error")
            codes["result" if error is None else str(error.get("code"))] += 1
            wrong.extend(f"{json.dumps(message)[:200]}: {p}" for p in problems_of(answer, expected))
            if sent % 50 == 0:
                peak = max(peak, process.memory_info().rss)

        one_case()
        elapsed = time.perf_counter() - started
        alive = "sessions" in server.request("agent/session/list", {}).get("result", {})
        rss_after = process.memory_info().rss
        more = sum(1 for a in list(server.answers.values()) if len(a) > 1)
        code = server.stop()

    print(f"{sent} fuzzed requests in {elapsed:.1f} s (seed {args.seed}, strings up to {args.huge_mb} MB)")
    print(f"not answered: {unanswered}; answered more than once: {more}; wrong answers: {len(wrong)} (target 0 each)")
    print("answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items())))
    print(f"server still serving afterwards: {alive}; exit code after shutdown/exit: {code}")
    print(f"server RSS: {rss_before / 2**20:.0f} MB before, peak {peak / 2**20:.0f} MB, {rss_after / 2**20:.0f} MB after")
    for line in wrong[:20]:
        print("  wrong:", line)


if __name__ == "__main__":
    main()
