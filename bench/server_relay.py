"""Relay benchmark over real HTTP: prints figures beside targets, asserts nothing.

    .venv/bin/python bench/server_relay.py [--deltas 2000] [--sessions 10] [--rounds 5]

A real local HTTP server (in its own process) answers every model request with an
OpenAI Chat Completions SSE stream of --deltas text deltas, written as fast as the
socket takes them (16 KiB writes). The real language server (`python -m
agent_lsp.lsp`, provider `openai` pointed at it) relays them; a plain JSON-RPC
client over stdio counts the deltas it receives (a merged `assistant/chunk`
carries several: its text).

- one session: followup sent -> first chunk; deltas/s from the followup to the
  last chunk (end to end) and from the first chunk to the last one (the relay);
- --sessions sessions started at once: each one's followup -> first chunk
  (p50/p99 over sessions x rounds) and deltas/s combined;
- during such a storm (longer streams), `agent/cancel` of one session: sent ->
  answered, and sent -> `agent/status idle` of that session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llm_stream import openai_stream, reads  # noqa: E402

TARGET_ONE = 50_000
TARGET_MANY = 50_000
TARGET_P50_MS = 50
TARGET_P99_MS = 200
TARGET_CANCEL_MS = 100


# ------------------------------------------------------------ the model server


def _model_server(ports: "multiprocessing.Queue[int]") -> None:
    """Streams `int(model)` deltas (the request's model name is the count)."""
    bodies: dict[int, list[bytes]] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)
                body = await reader.readexactly(length)
                if not head.startswith(b"POST /v1/chat/completions "):  # the context-window probes
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                n = int(json.loads(body).get("model", "2000"))
                pieces = bodies.get(n) or bodies.setdefault(n, reads(openai_stream(n)))
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
                for piece in pieces:
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def run() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        ports.put(server.sockets[0].getsockname()[1])
        await asyncio.sleep(3600)

    asyncio.run(run())


# ------------------------------------------------------------------ the client


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Client:
    """A plain JSON-RPC client of the server over stdio (no pygls: its own cost stays out)."""

    command: tuple[str, ...] = (sys.executable, "-m", "agent_lsp.lsp")

    def __init__(self) -> None:
        self.next_id = 10
        self.answers: dict[int, asyncio.Future] = {}
        self.first_chunk: dict[str, float] = {}
        self.last_chunk: dict[str, float] = {}
        self.deltas: dict[str, int] = {}
        self.idle: dict[str, asyncio.Future] = {}

    async def start(self, url: str, tmp: Path) -> None:
        workspace = tmp / "ws"
        workspace.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(AGENT_LSP_CONFIG=str(tmp / "none.toml"), XDG_CACHE_HOME=str(tmp / "cache"), OPENAI_API_KEY="sk-bench")
        self.proc = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, limit=2**24)
        self.reader = asyncio.ensure_future(self._read())
        self.workspace = workspace
        await self.request("initialize", {
            "processId": os.getpid(), "rootUri": workspace.as_uri(),
            "capabilities": {"experimental": {"agentLsp": {"events": True}}},  # it renders session/event
            "initializationOptions": {"sessionsDir": str(tmp / "sessions"),
                                      "model": {"provider": "openai", "baseUrl": url + "/v1", "model": "2000"}}})
        self.notify("initialized", {})

    def notify(self, method: str, params: dict) -> None:
        self.proc.stdin.write(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    async def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        future = self.answers[self.next_id] = asyncio.get_running_loop().create_future()
        self.proc.stdin.write(frame({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        return await future

    async def _read(self) -> None:
        stdout = self.proc.stdout
        while True:
            head = await stdout.readuntil(b"\r\n\r\n")
            length = int(head.split(b":")[1].split(b"\r\n")[0])
            message = json.loads(await stdout.readexactly(length))
            now = time.perf_counter()
            method = message.get("method")
            if method is None:
                future = self.answers.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message.get("result", message.get("error")))
            elif "id" in message:  # workspace/configuration and the like
                self.proc.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": [None]}))
            elif method == "session/event":
                sid = message["params"]["sessionId"]
                for event in message["params"]["events"]:
                    if event["type"] == "assistant/chunk" and event["data"]["chunk"]["type"] == "text-delta":
                        # each delta of the stream is " tok<n>": count them in the (merged) text
                        self.deltas[sid] = self.deltas.get(sid, 0) + event["data"]["chunk"]["text"].count(" tok")
                        self.first_chunk.setdefault(sid, now)
                        self.last_chunk[sid] = now
            elif method == "agent/status" and message["params"]["status"] == "idle":
                future = self.idle.get(message["params"]["sessionId"])
                if future is not None and not future.done():
                    future.set_result(now)

    async def new_session(self) -> str:
        sid = (await self.request("agent/session/new", {}))["sessionId"]
        self.idle[sid] = asyncio.get_running_loop().create_future()
        return sid

    async def turn(self, sid: str, deltas: int) -> tuple[float, float, float]:
        """(followup sent, first chunk, last chunk) of one streamed reply."""
        self.idle[sid] = asyncio.get_running_loop().create_future()
        self.deltas[sid] = 0
        self.first_chunk.pop(sid, None)
        sent = time.perf_counter()
        await self.request("agent/followup", {"sessionId": sid, "content": "go"})
        await asyncio.wait_for(self.idle[sid], 120)
        if self.deltas[sid] != deltas:
            raise SystemExit(f"session {sid}: {self.deltas[sid]} deltas received, {deltas} sent")
        return sent, self.first_chunk[sid], self.last_chunk[sid]

    async def set_deltas(self, deltas: int) -> None:
        self.notify("workspace/didChangeConfiguration", {"settings": {"agentLsp": {"model": {"model": str(deltas)}}}})
        await self.request("agent/session/list", {})  # applied once this is answered

    async def stop(self) -> None:
        await self.request("shutdown", {})
        self.notify("exit", {})
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except asyncio.TimeoutError:
            self.proc.kill()
        self.reader.cancel()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux): a figure the load of a shared machine moves less."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    model = multiprocessing.Process(target=_model_server, args=(ports,), daemon=True)
    model.start()
    url = f"http://127.0.0.1:{ports.get(timeout=30)}"
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_dir:
        client = Client()
        await client.start(url, Path(tmp_dir))
        await client.set_deltas(args.deltas)
        sessions = [await client.new_session() for _ in range(args.sessions)]
        await client.turn(sessions[0], args.deltas)  # the providers and the HTTP connection are warm

        firsts, end_to_end, relay = [], [], []
        cpu = cpu_seconds(client.proc.pid)
        for _ in range(args.rounds):
            sent, first, last = await client.turn(sessions[0], args.deltas)
            firsts.append(first - sent)
            end_to_end.append(args.deltas / (last - sent))
            relay.append((args.deltas - 1) / (last - first) if last > first else float("inf"))
        one_cpu = args.deltas * args.rounds / (cpu_seconds(client.proc.pid) - cpu)

        many_firsts, combined = [], []
        cpu = cpu_seconds(client.proc.pid)
        for _ in range(args.rounds):
            started = time.perf_counter()
            results = await asyncio.gather(*(client.turn(sid, args.deltas) for sid in sessions))
            many_firsts += [first - sent for sent, first, _ in results]
            combined.append(args.deltas * len(sessions) / (max(last for *_, last in results) - started))
        many_cpu = args.deltas * len(sessions) * args.rounds / (cpu_seconds(client.proc.pid) - cpu)

        # cancel during a storm: every session streams a long reply, one is cancelled
        long = args.deltas * 20
        await client.set_deltas(long)
        cancels, idles = [], []
        for _ in range(args.rounds):
            loop = asyncio.get_running_loop()
            for sid in sessions:
                client.idle[sid] = loop.create_future()
                client.first_chunk.pop(sid, None)
                client.deltas[sid] = 0
            await asyncio.gather(*(client.request("agent/followup", {"sessionId": sid, "content": "go"}) for sid in sessions))
            while len([sid for sid in sessions if sid in client.first_chunk]) < len(sessions):
                await asyncio.sleep(0.002)
            victim = sessions[-1]
            sent = time.perf_counter()
            await client.request("agent/cancel", {"sessionId": victim})
            cancels.append(time.perf_counter() - sent)
            idles.append(await asyncio.wait_for(client.idle[victim], 30) - sent)
            await asyncio.gather(*(client.idle[sid] for sid in sessions))
        await client.stop()
    model.terminate()
    load_after = os.getloadavg()[0]

    ms = 1000
    print(f"load average {load_before:.1f} -> {load_after:.1f}; OpenAI SSE over HTTP on 127.0.0.1, "
          f"{args.deltas} deltas a reply, {args.rounds} rounds")
    print(f"1 session : followup -> first chunk median {statistics.median(firsts) * ms:.1f} ms; "
          f"{statistics.median(end_to_end):,.0f} deltas/s followup -> last chunk, "
          f"{statistics.median(relay):,.0f} deltas/s first -> last chunk (target >= {TARGET_ONE:,}); "
          f"{one_cpu:,.0f} deltas per CPU-second of the server")
    print(f"{len(sessions)} sessions: first chunk p50 {pct(many_firsts, 0.5) * ms:.0f} ms (target <= {TARGET_P50_MS}), "
          f"p99 {pct(many_firsts, 0.99) * ms:.0f} ms (target <= {TARGET_P99_MS}); "
          f"{statistics.median(combined):,.0f} deltas/s combined (target >= {TARGET_MANY:,}); "
          f"{many_cpu:,.0f} per CPU-second of the server")
    print(f"cancel during the storm ({long} deltas a reply): answered median {statistics.median(cancels) * ms:.1f} ms "
          f"[max {max(cancels) * ms:.1f}], session idle median {statistics.median(idles) * ms:.1f} ms "
          f"[max {max(idles) * ms:.1f}] (target <= {TARGET_CANCEL_MS})")


if __name__ == "__main__":
    asyncio.run(main())
