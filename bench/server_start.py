"""Start-up benchmark of the language server: prints figures, asserts nothing.

    .venv/bin/python bench/server_start.py [--runs 10]

Spawns the real server (`python -m agent_lsp.lsp`) over stdio as an editor
does and sends, at once, `initialize`, `initialized` and `agent/session/new`
(what a client sends when the user opens the agent panel), then nine more
`agent/session/new` one after the other. Prints, median over --runs starts
(min-max in brackets):
- spawn -> `initialize` answered
- spawn -> the first `agent/session/new` answered (the first session ready),
  and the CPU time the server used until then (less sensitive to the load of
  a shared machine than the wall clock)
- spawn -> the tenth session ready
- on the loaded server, a further `agent/session/new` next to a plain round
  trip (a request for a method that does not exist)

once with the start-up caches already written by an earlier start ("warm"),
and once with an empty cache directory each time ("first start": what a user
sees the first time after installing or upgrading); each for the scripted
model and for an OpenAI-compatible endpoint (the provider and httpx load with
the first session); and warm, for a client that declares
`workspace/configuration` and answers it with its settings (VS Code, Neovim
and Emacs do: "settings pulled"). The server runs with bytecode caching on, as installed.

    .venv/bin/python bench/server_start.py --breakdown [--runs 10]

says where the server's CPU time to a first session goes: each run a fresh
interpreter does, one part after the other and on one thread, what the server
does (with its start-up code cache warm): the early phase answers
`initialize`, `initialized` and a first `agent/session/new` (scripted model),
then pygls and the rest load and the server takes over; CPU milliseconds per
part, median over --runs, and the garbage collector's share.
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
TARGET_FIRST_SESSION_MS = 400  # on a quiet machine
TARGET_LATER_SESSION_MS = 2


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


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_start(tmp: Path, cache: Path, n: int, model: dict, pulls: bool = False) -> dict[str, float]:
    """Seconds from spawn to: initialize answered, first and tenth session ready;
    CPU seconds to the first session; a later session/new and a plain round trip."""
    workspace = tmp / f"ws-{n}"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(cache), AGENT_LSP_CONFIG=str(tmp / "none.toml"), OPENAI_API_KEY="sk-bench")
    settings = {"sessionsDir": str(tmp / f"sessions-{n}"), "model": model}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": os.getpid(), "rootUri": workspace.as_uri(),
                       "capabilities": {"workspace": {"configuration": True}} if pulls else {},
                       "initializationOptions": settings}}
    spawned = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agent_lsp.lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        proc.stdin.write(frame(message))
        proc.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            message = read_message(proc.stdout)
            if message is None:
                raise SystemExit("the server ended before answering")
            if message.get("id") == request_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request to the client (workspace/configuration)
                pulled = message["method"] == "workspace/configuration"
                send({"jsonrpc": "2.0", "id": message["id"], "result": [settings] if pulled else None})

    proc.stdin.write(frame(init) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                     + frame({"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {}}))
    proc.stdin.flush()
    times: dict[str, float] = {}
    answer(1)
    times["initialize"] = time.perf_counter() - spawned
    if "result" not in answer(2):
        raise SystemExit("agent/session/new failed")
    times["first"] = time.perf_counter() - spawned
    times["first_cpu"] = cpu_seconds(proc.pid)
    for i in range(3, 12):
        send({"jsonrpc": "2.0", "id": i, "method": "agent/session/new", "params": {}})
        answer(i)
        if i == 11:
            times["tenth"] = time.perf_counter() - spawned
    later, plain = [], []
    for i in range(20, 40):
        sent = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i, "method": "agent/session/new", "params": {}})
        answer(i)
        later.append(time.perf_counter() - sent)
        sent = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 100 + i, "method": "bench/noSuchMethod", "params": {}})
        answer(100 + i)
        plain.append(time.perf_counter() - sent)
    times["later"], times["plain"] = statistics.median(later), statistics.median(plain)
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    proc.wait(30)
    return times


# Run in a fresh interpreter: prints {part: CPU seconds} as JSON. The parts in the
# order the server needs them; each includes what it imports first. Up to the
# first session they are what the early phase does on the main thread
# (agent_lsp/lsp/early.py); the rest is what the loader thread does after it.
BREAKDOWN_SCRIPT = r"""
import gc, json, sys, time
cpu = {"interpreter and site": time.process_time()}
collecting = {"since": 0.0, "total": 0.0}
def count_gc(phase, info):
    if phase == "start":
        collecting["since"] = time.process_time()
    else:
        collecting["total"] += time.process_time() - collecting["since"]
gc.callbacks.append(count_gc)
last = [time.process_time()]
def part(name):
    now = time.process_time()
    cpu[name], last[0] = now - last[0], now
from agent_lsp.cli import main, server_process
from agent_lsp.lsp import server
from agent_lsp.lsp.code_cache import StartCodeCache
main.build_parser().parse_args(["serve"])
forward_refs = StartCodeCache(("typing",)).open()
gc.disable()
early = server.EarlyPhase(type("Writer", (), {"write": lambda self, data: None})(), server_process.ServerProcess())
params = {"processId": None, "rootUri": __import__("pathlib").Path(sys.argv[1]).as_uri(), "capabilities": {},
          "initializationOptions": {"sessionsDir": sys.argv[2], "model": {"provider": "scripted", "script": []}}}
import asyncio
part("CLI, the server's entry, asyncio (no pygls)")
def message(**fields):
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()
async def first_session():
    assert early.receive(message(id=1, method="initialize", params=params)) == []
    assert early.receive(message(method="initialized", params={})) == []
    part("early: initialize, initialized (pydantic, our settings models)")
    assert early.receive(message(id=2, method="agent/session/new", params={})) == []
    part("early: the first session/new (agent, tools, MCP, the host, the session)")
    gc.enable()
    cpu["of which garbage collection (before the first answer)"] = collecting["total"]
    handlers = server._import_server(("attr._make",))
    part("then: pygls, lsprotocol, our wire models and LSP features")
    ls = server._create_server(handlers, server_process.ServerProcess(), early.writer, early.initialize)
    part("then: the server object (lsprotocol's cattrs converter)")
    early.hand_over(ls)
    part("then: the hand-over")
asyncio.run(first_session())
forward_refs.close()
cpu["of which garbage collection (in all)"] = collecting["total"]
print(json.dumps(cpu))
"""


def breakdown(runs: int) -> None:
    load = os.getloadavg()[0]
    parts: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(XDG_CACHE_HOME=str(tmp / "cache"), AGENT_LSP_CONFIG=str(tmp / "none.toml"))
        for n in range(runs + 1):  # the first run writes the code cache
            workspace = tmp / f"ws-{n}"
            workspace.mkdir()
            out = subprocess.run([sys.executable, "-c", BREAKDOWN_SCRIPT, str(workspace), str(tmp / f"sessions-{n}")],
                                 env=env, capture_output=True, text=True, check=True).stdout
            if n:
                for name, seconds in json.loads(out).items():
                    parts.setdefault(name, []).append(seconds)
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; server CPU to a first session, by part; "
          f"median of {runs} [min-max]")
    before = [k for k in parts if not k.startswith(("then", "of which"))]
    answered = [sum(run) for run in zip(*(parts[k] for k in before))]
    total = [sum(run) for run in zip(*(v for k, v in parts.items() if not k.startswith("of which")))]
    rows = [*((k, parts[k]) for k in before), ("the first session answered", answered),
            *((k, v) for k, v in parts.items() if k not in before), ("total", total)]
    for name, values in rows:
        print(f"  {name:76} {summary(values, 'ms CPU')}")


def summary(values: list[float], unit: str = "ms", digits: int = 0) -> str:
    ms = [v * 1000 for v in values]
    return f"{statistics.median(ms):.{digits}f} {unit} [{min(ms):.{digits}f}-{max(ms):.{digits}f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--breakdown", action="store_true", help="where the server's CPU to a first session goes")
    args = parser.parse_args()
    if args.breakdown:
        breakdown(args.runs)
        return
    models = {"scripted": {"provider": "scripted", "script": []},
              "openai-compatible": {"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m",
                                    "contextWindow": 8192}}
    load = os.getloadavg()[0]
    results = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        one_start(tmp, tmp / "cache-warm", 0, models["scripted"])  # writes the caches the warm starts use
        n = 1
        kinds = [(name, kind) for name in models for kind in ("warm cache", "first start")]
        kinds.insert(1, ("scripted", "settings pulled"))
        for name, kind in kinds:
            runs = []
            for _ in range(args.runs):
                n += 1
                cache = tmp / (f"cache-{n}" if kind == "first start" else "cache-warm")
                runs.append(one_start(tmp, cache, n, models[name], pulls=kind == "settings pulled"))
            results[name, kind] = runs
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; n={args.runs} each; median [min-max]")
    for (name, kind), runs in results.items():
        print(f"{name:17} {kind:15}: initialize {summary([r['initialize'] for r in runs])} (target < {TARGET_INITIALIZE_MS}); "
              f"first session {summary([r['first'] for r in runs])} (target <= {TARGET_FIRST_SESSION_MS} quiet), "
              f"{summary([r['first_cpu'] for r in runs], 'ms CPU')}; tenth session {summary([r['tenth'] for r in runs])}; "
              f"later session/new {summary([r['later'] for r in runs], 'ms', 2)} (target <= {TARGET_LATER_SESSION_MS}) "
              f"beside a plain round trip {summary([r['plain'] for r in runs], 'ms', 2)}")


if __name__ == "__main__":
    main()
