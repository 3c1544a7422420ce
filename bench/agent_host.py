"""The agent host's start-up, beside the one-process server and a stdlib floor:
prints figures beside targets, asserts nothing.

    .venv/bin/python bench/agent_host.py [--runs 7] [--rss]

A real local HTTP server (its own process) answers the model's requests with a
short OpenAI-compatible stream. Each run spawns what an editor spawns and
sends at once `initialize`, `initialized` and `agent/session/new`, then, as
soon as the session is answered, `agent/followup`; it records spawn -> session
ready and spawn -> the first streamed chunk (`session/event` with a text
delta). Modes, interleaved run by run so the machine's load falls on all:

- floor: `bench/stdlib_floor.py`, stdlib only, relays the first delta itself;
- one process: `agent-lsp --no-host` (today's default; its early start phase on);
- cold host: `agent-lsp --host` with no host running (it starts one);
- warm host: `agent-lsp --host` with the host already running.

--rss: host memory with 10 folders (one window each) and 50 sessions open.
--fanout: one session streaming 2,000 deltas with 1, 2 and 5 windows attached
(the others follow it): deltas/s as the window that sent the prompt sees them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_WARM_RATIO = 2.0  # warm host, spawn -> first chunk, within 2x the floor
DELTAS = "8"  # the model's name is the number of deltas the model server streams (server_relay.py)

sys.path.insert(0, str(Path(__file__).parent))
from server_relay import _model_server  # noqa: E402
from server_start import frame, read_message  # noqa: E402


def one_start(command: list[str], env: dict[str, str], workspace: Path, settings: dict) -> tuple[float, float]:
    """Seconds from spawn to the session answered, and to the first streamed chunk."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": os.getpid(), "rootUri": workspace.as_uri(),
                       "capabilities": {"experimental": {"agentLsp": {"events": True}}},
                       "initializationOptions": settings}}
    spawned = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame(init) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                     + frame({"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": {}}))
    proc.stdin.flush()
    ready = first = None
    while first is None:
        message = read_message(proc.stdout)
        if message is None:
            raise SystemExit(f"{command}: ended before the first chunk")
        if message.get("id") == 2 and "method" not in message:
            ready = time.perf_counter() - spawned
            sid = message["result"]["sessionId"]
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "agent/followup",
                                    "params": {"sessionId": sid, "content": "hi"}}))
            proc.stdin.flush()
        elif "method" in message and "id" in message:
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": [None]}))
            proc.stdin.flush()
        elif message.get("method") == "session/event" and any(
                e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta"
                for e in message["params"]["events"]):
            first = time.perf_counter() - spawned
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    proc.wait(30)
    assert ready is not None
    return ready, first


def host_pid(socket_file: Path) -> int | None:
    try:
        return int(socket_file.with_name(socket_file.name + ".lock").read_text())
    except (OSError, ValueError):
        return None


def stop_host(socket_file: Path) -> None:
    pid = host_pid(socket_file)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGTERM)
            for _ in range(200):
                os.kill(pid, 0)
                time.sleep(0.02)
        except ProcessLookupError:
            pass


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def host_rss(tmp: Path, env: dict[str, str], settings: dict) -> tuple[float, float]:
    """Host RSS with one window open (one session), then with 10 windows on 10
    folders and 5 sessions each."""
    socket_file = Path(env["AGENT_LSP_HOST_SOCKET"])
    windows = []
    try:
        for n in range(10):
            workspace = tmp / f"rss-{n}"
            workspace.mkdir()
            proc = subprocess.Popen([sys.executable, "-m", "agent_lsp", "--host"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
                               "initializationOptions": settings}}
            proc.stdin.write(frame(init) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            for i in range(5):
                proc.stdin.write(frame({"jsonrpc": "2.0", "id": 10 + i, "method": "agent/followup",
                                        "params": {"content": "hi"}}))
            proc.stdin.flush()
            answered = 0
            while answered < 5:
                message = read_message(proc.stdout)
                if message is None:
                    raise SystemExit("a window ended early")
                if "method" in message and "id" in message:
                    proc.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": [None]}))
                    proc.stdin.flush()
                elif message.get("id", 0) >= 10 and "method" not in message:
                    answered += 1
            windows.append(proc)
            if n == 0:
                time.sleep(1.0)
                one = rss_mb(host_pid(socket_file))
        time.sleep(2.0)  # the turns end
        return one, rss_mb(host_pid(socket_file))
    finally:
        for proc in windows:
            proc.stdin.close()
            proc.wait(30)


class Window:
    """A window on the host: a plain client whose reader thread counts the deltas it is sent."""

    def __init__(self, env: dict[str, str], workspace: Path, settings: dict):
        import threading

        self.proc = subprocess.Popen([sys.executable, "-m", "agent_lsp", "--host"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.answers: dict[int, dict] = {}
        self.deltas = 0
        self.idle = threading.Event()
        self.answered = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.call(1, "initialize", {"processId": None, "rootUri": workspace.as_uri(), "initializationOptions": settings,
                                    "capabilities": {"experimental": {"agentLsp": {"events": True}}}})
        self.proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        self.proc.stdin.flush()

    def call(self, msg_id: int, method: str, params: dict) -> dict:
        self.proc.stdin.write(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        self.proc.stdin.flush()
        with self.answered:
            self.answered.wait_for(lambda: msg_id in self.answers, 60)
        return self.answers[msg_id]

    def _read(self) -> None:
        while (message := read_message(self.proc.stdout)) is not None:
            if "method" in message and "id" in message:
                self.proc.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": [None]}))
                self.proc.stdin.flush()
            elif "method" not in message:
                with self.answered:
                    self.answers[message["id"]] = message
                    self.answered.notify_all()
            elif message["method"] == "session/event":
                for event in message["params"]["events"]:
                    if event["type"] == "assistant/chunk" and event["data"]["chunk"]["type"] == "text-delta":
                        self.deltas += event["data"]["chunk"]["text"].count(" tok")
            elif message["method"] == "agent/status" and message["params"]["status"] == "idle":
                self.idle.set()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def fanout(tmp: Path, env: dict[str, str], url: str, clients: int, deltas: int = 2000) -> tuple[float, list[int]]:
    """deltas/s of one streaming session seen by the window that sent the prompt,
    with `clients - 1` more windows following it; and what each window counted."""
    workspace = tmp / f"fanout-{clients}"
    workspace.mkdir()
    settings = {"sessionsDir": str(tmp / "fanout-sessions"), "model": {"provider": "openai", "baseUrl": url, "model": str(deltas)}}
    windows = [Window(env, workspace, settings) for _ in range(clients)]
    try:
        sid = windows[0].call(2, "agent/session/new", {})["result"]["sessionId"]
        for window in windows[1:]:
            window.call(2, "agent/session/load", {"sessionId": sid})
        started = time.perf_counter()
        windows[0].call(3, "agent/followup", {"sessionId": sid, "content": "stream"})
        windows[0].idle.wait(120)
        elapsed = time.perf_counter() - started
        time.sleep(0.5)  # the followers' last notifications
        return windows[0].deltas / elapsed, [w.deltas for w in windows]
    finally:
        for window in windows:
            window.close()


def summary(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    return f"{statistics.median(ms):,.0f} ms [{ms[0]:,.0f}-{ms[-1]:,.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rss", action="store_true")
    parser.add_argument("--fanout", action="store_true")
    args = parser.parse_args()
    ports: multiprocessing.Queue = multiprocessing.Queue()
    model = multiprocessing.Process(target=_model_server, args=(ports,), daemon=True)
    model.start()
    url = f"http://127.0.0.1:{ports.get(timeout=10)}/v1"
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        run_dir = tmp / "run"
        run_dir.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "AGENT_LSP_HOST")}
        env.update(AGENT_LSP_CONFIG=str(tmp / "none.toml"), XDG_CACHE_HOME=str(tmp / "cache"), OPENAI_API_KEY="sk-bench",
                   AGENT_LSP_HOST_IDLE_S="600")
        settings = {"sessionsDir": str(tmp / "sessions"), "model": {"provider": "openai", "baseUrl": url, "model": DELTAS}}
        warm_socket = run_dir / "warm.sock"
        modes = {
            "floor (stdlib relay)": ([sys.executable, str(ROOT / "bench" / "stdlib_floor.py"), url], {}),
            "one process (--no-host)": ([sys.executable, "-m", "agent_lsp", "--no-host"], {}),
            "cold host (--host, none running)": ([sys.executable, "-m", "agent_lsp", "--host"], None),
            "warm host (--host, running)": ([sys.executable, "-m", "agent_lsp", "--host"],
                                            {"AGENT_LSP_HOST_SOCKET": str(warm_socket)}),
        }
        figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in modes}
        workspace = tmp / "ws"
        workspace.mkdir()
        one_start(modes["warm host (--host, running)"][0], dict(env, AGENT_LSP_HOST_SOCKET=str(warm_socket)),
                  workspace, settings)  # starts the warm host; the caches of every mode written once
        one_start(modes["one process (--no-host)"][0], env, workspace, settings)
        try:
            for run in range(args.runs):
                for name, (command, extra) in modes.items():
                    cold_socket = run_dir / f"cold-{run}.sock"
                    mode_env = dict(env, **(extra if extra is not None else {"AGENT_LSP_HOST_SOCKET": str(cold_socket)}))
                    ready, first = one_start(command, mode_env, workspace, settings)
                    figures[name][0].append(ready)
                    figures[name][1].append(first)
                    if extra is None:
                        stop_host(cold_socket)
            rss = host_rss(tmp, dict(env, AGENT_LSP_HOST_SOCKET=str(run_dir / "rss.sock")), settings) if args.rss else None
            fan = ({n: fanout(tmp, dict(env, AGENT_LSP_HOST_SOCKET=str(warm_socket)), url, n) for n in (1, 2, 5)}
                   if args.fanout else None)
        finally:
            stop_host(warm_socket)
            stop_host(run_dir / "rss.sock")
            model.terminate()
    floor_first = statistics.median(figures["floor (stdlib relay)"][1])
    print(f"agent host start-up, {args.runs} runs per mode, interleaved; load {load:.1f} at start")
    print(f"{'mode':36} {'spawn -> session ready':>26} {'spawn -> first chunk':>26} {'x floor':>8}")
    for name, (ready, first) in figures.items():
        print(f"{name:36} {summary(ready):>26} {summary(first):>26} {statistics.median(first) / floor_first:>7.1f}x")
    warm = statistics.median(figures["warm host (--host, running)"][1]) / floor_first
    print(f"target: warm host first chunk within {TARGET_WARM_RATIO:.0f}x the floor: "
          f"{warm:.1f}x ({'yes' if warm <= TARGET_WARM_RATIO else 'no'})")
    if fan is not None:
        for n, (rate, counts) in fan.items():
            print(f"one session streaming 2,000 deltas, {n} window{'s' if n > 1 else ''} attached: "
                  f"{rate:,.0f} deltas/s at the prompting window; each window counted {counts}")
    if rss is not None:
        print(f"host RSS: {rss[0]:.0f} MB with one window and one session; "
              f"{rss[1]:.0f} MB with 10 windows on 10 folders and 50 sessions")


if __name__ == "__main__":
    main()
