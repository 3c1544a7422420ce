"""Server benchmark: prints figures, asserts nothing.

    .venv/bin/python bench/server_bench.py [--chunks 20000] [--starts 5] [--latency-runs 20]

Measures, with the scripted model streaming as fast as it can:
- cold start: spawn -> initialize result (the first start, which has no
  start-up code cache yet, then the median of the later ones, which use it),
  and spawn -> the answer to the first request after initialize (the
  server fully loaded); bench/server_start.py measures start-up alone
- the first followup of a fresh, idle server (the model providers load then)
- time from `agent/followup` sent to the first `assistant/chunk` received
  (median), next to the round trip of a trivial request on the same server
  (what the transport itself costs)
- chunks per second delivered to the client for one reply of --chunks text
  deltas (coalesced), and how many notifications carried them
- RSS of the server: idle after initialize, and peak during the stream
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agent_lsp.lsp.rpc import raw_params_converter


async def _drain(stream) -> None:
    while await stream.read(65536):
        pass


class Bench:
    def __init__(self, workspace: Path, sessions: Path, script: list, cache: Path):
        self.workspace, self.sessions, self.script, self.cache = workspace, sessions, script, cache
        self.client = LanguageClient("bench", "0", converter_factory=raw_params_converter)
        self.first_chunk: dict[str, float] = {}
        self.idle_at: dict[str, float] = {}
        self.waiters: dict[str, asyncio.Future] = {}
        self.chars: dict[str, int] = {}
        self.notifications = 0

        @self.client.feature("session/event")
        def on_event(params: dict) -> None:
            self.notifications += 1
            sid = params["sessionId"]
            for event in params["events"]:
                if event["type"] == "assistant/chunk" and event["data"]["chunk"]["type"] == "text-delta":
                    self.first_chunk.setdefault(sid, time.perf_counter())
                    self.chars[sid] = self.chars.get(sid, 0) + len(event["data"]["chunk"]["text"])

        @self.client.feature("agent/status")
        def on_status(params: dict) -> None:
            if params["status"] != "idle":
                return
            self.idle_at[params["sessionId"]] = time.perf_counter()
            future = self.waiters.get(params["sessionId"])
            if future is not None and not future.done():
                future.set_result(None)

    async def start(self) -> float:
        started = time.perf_counter()
        env = dict(os.environ, AGENT_LSP_CONFIG=str(self.sessions / "none.toml"), XDG_CACHE_HOME=str(self.cache))
        await self.client.start_io(sys.executable, "-m", "agent_lsp.lsp", env=env)
        self._drain = asyncio.create_task(_drain(self.client._server.stderr))
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(experimental={"agentLsp": {"events": True}}),  # it follows agent/status
                workspace_folders=[types.WorkspaceFolder(uri=self.workspace.as_uri(), name="ws")],
                initialization_options={
                    "model": {"provider": "scripted", "script": self.script},
                    "sessionsDir": str(self.sessions),
                },
            )
        )
        elapsed = time.perf_counter() - started
        self.client.initialized(types.InitializedParams())
        return elapsed

    @property
    def pid(self) -> int:
        return self.client._server.pid

    async def roundtrip(self) -> float:
        sent = time.perf_counter()
        await self.client.protocol.send_request_async("agent/session/list", {"workspaceUri": self.workspace.as_uri()})
        return time.perf_counter() - sent

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        self._drain.cancel()


class RssSampler:
    def __init__(self, pid: int):
        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.process.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.005)

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--starts", type=int, default=6)
    parser.add_argument("--latency-runs", type=int, default=20)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()

        starts = []
        loaded = []
        idle_rss = []
        for i in range(args.starts):
            bench = Bench(workspace, tmp_path / f"sessions-start-{i}", [], tmp_path / "cache")
            spawned = time.perf_counter()
            starts.append(await bench.start())
            await bench.roundtrip()  # pygls has loaded
            loaded.append(time.perf_counter() - spawned)
            await asyncio.sleep(0.5)  # and the background warm-up (agent, tools, providers) too
            idle_rss.append(psutil.Process(bench.pid).memory_info().rss)
            await bench.stop()

        # latency: each followup is a new session whose first reply is "hi"
        bench = Bench(workspace, tmp_path / "sessions-latency", [{"text": "hi"}], tmp_path / "cache")
        await bench.start()
        await bench.roundtrip()
        await asyncio.sleep(0.5)  # idle, after the background warm-up
        _, first_followup, _ = await _followup_new_session(bench, "hello")
        latencies, roundtrips = [], []
        for _ in range(args.latency_runs):
            sid, first, _ = await _followup_new_session(bench, "hello")
            latencies.append(first)
            roundtrips.append(await bench.roundtrip())
        await bench.stop()

        # throughput: one reply of N text deltas
        bench = Bench(workspace, tmp_path / "sessions-stream", [{"text": "x" * args.chunks}], tmp_path / "cache")
        await bench.start()
        await bench.roundtrip()
        server_process = psutil.Process(bench.pid)
        with RssSampler(bench.pid) as sampler:
            before = bench.notifications
            cpu_before = sum(server_process.cpu_times()[:2])
            sid, first, total = await _followup_new_session(bench, "stream")
            cpu = sum(server_process.cpu_times()[:2]) - cpu_before
            notifications = bench.notifications - before
        assert bench.chars[sid] == args.chunks, (bench.chars[sid], args.chunks)
        await bench.stop()

    ms = 1000.0
    # the first start has no start-up code cache yet (see agent_lsp/lsp/code_cache.py)
    print(f"cold start (spawn -> initialize result): first start {starts[0] * ms:.0f} ms; "
          f"later starts median {statistics.median(starts[1:]) * ms:.0f} ms "
          f"(min {min(starts[1:]) * ms:.0f}, max {max(starts[1:]) * ms:.0f}, n={len(starts) - 1})")
    print(f"spawn -> first request after initialize answered (server loaded): first start {loaded[0] * ms:.0f} ms; "
          f"later starts median {statistics.median(loaded[1:]) * ms:.0f} ms")
    print(f"first followup of a fresh idle server -> first chunk: {first_followup * ms:.1f} ms")
    print(f"followup -> first chunk: median {statistics.median(latencies) * ms:.2f} ms; "
          f"plain request round trip: median {statistics.median(roundtrips) * ms:.2f} ms; "
          f"added: {(statistics.median(latencies) - statistics.median(roundtrips)) * ms:.2f} ms (n={len(latencies)})")
    print(f"stream of {args.chunks} chunks: {total * ms:.0f} ms followup -> idle, "
          f"{args.chunks / total:,.0f} chunks/s delivered ({args.chunks / cpu:,.0f} per CPU-second of the server), "
          f"in {notifications} session/event notifications")
    print(f"server RSS: idle {statistics.median(idle_rss) / 2**20:.1f} MB, peak during the stream {sampler.peak / 2**20:.1f} MB")


async def _followup_new_session(bench: Bench, text: str) -> tuple[str, float, float]:
    """Send a followup (a new session) and wait for it to go idle; (session id,
    seconds to the first chunk, seconds to idle). The idle status may arrive
    before the followup's response: `idle_at` keeps it."""
    sent = time.perf_counter()
    result = await bench.client.protocol.send_request_async("agent/followup", {"content": text})
    sid = result["sessionId"]
    if sid not in bench.idle_at:
        bench.waiters[sid] = asyncio.get_running_loop().create_future()
        await asyncio.wait_for(bench.waiters[sid], 120)
    return sid, bench.first_chunk[sid] - sent, bench.idle_at[sid] - sent


if __name__ == "__main__":
    asyncio.run(main())
