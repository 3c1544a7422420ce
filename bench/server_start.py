"""Start-up benchmark of the language server: prints figures, asserts nothing.

    .venv/bin/python bench/server_start.py [--runs 10]

Spawns the real server (`python -m agent_lsp.lsp`) over stdio as an editor
does and sends, at once, `initialize`, `initialized` and `agent/session/new`
(what a client sends when the user opens the agent panel). Prints, median over
--runs starts (min-max in brackets):
- spawn -> `initialize` answered
- spawn -> the first `agent/session/new` answered (the first session ready)

once with the initialize cache already written by an earlier start ("warm"),
and once with an empty cache directory each time ("first start": what a user
sees the first time after installing or upgrading).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_INITIALIZE_MS = 400


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
        elif line.strip() == b"" and length is not None:
            return json.loads(stream.read(length))


def one_start(tmp: Path, cache: Path, n: int) -> tuple[float, float]:
    """(seconds to the initialize answer, seconds to the session/new answer)."""
    workspace = tmp / f"ws-{n}"
    workspace.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), AGENT_LSP_CONFIG=str(tmp / "none.toml"))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
                       "initializationOptions": {"sessionsDir": str(tmp / f"sessions-{n}"),
                                                 "model": {"provider": "scripted", "script": []}}}}
    spawned = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agent_lsp.lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame(init) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                     + frame({"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {}}))
    proc.stdin.flush()
    initialized = ready = None
    while ready is None:
        message = read_message(proc.stdout)
        if message is None:
            raise SystemExit("the server ended before answering")
        if message.get("id") == 1 and "method" not in message:
            initialized = time.perf_counter() - spawned
        elif message.get("id") == 2 and "method" not in message:
            if "result" not in message:
                raise SystemExit(f"agent/session/new failed: {message}")
            ready = time.perf_counter() - spawned
        elif "method" in message and "id" in message:  # a request to the client (workspace/configuration)
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": [None]}))
            proc.stdin.flush()
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    proc.wait(30)
    assert initialized is not None
    return initialized, ready


def summary(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):.0f} ms [{min(ms):.0f}-{max(ms):.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        one_start(tmp, tmp / "cache-warm", 0)  # writes the cache the warm starts use
        warm = [one_start(tmp, tmp / "cache-warm", n) for n in range(1, args.runs + 1)]
        first = [one_start(tmp, tmp / f"cache-first-{n}", 100 + n) for n in range(args.runs)]
    print(f"load average {os.getloadavg()[0]:.1f}; n={args.runs} each")
    for name, runs in (("warm cache", warm), ("first start", first)):
        print(f"{name:12}: spawn -> initialize answered {summary([r[0] for r in runs])} (target < {TARGET_INITIALIZE_MS} ms); "
              f"spawn -> first agent/session/new answered {summary([r[1] for r in runs])}")


if __name__ == "__main__":
    main()
