"""The ACP face beside the LSP face: the same figures, measured in one run. Prints, asserts nothing.

    .venv/bin/python bench/acp_face.py [--chunks 20000] [--starts 5] [--runs 20]

Each figure is measured on `agent-lsp acp` (driven by the ACP Python SDK's
client) and on the LSP server (`python -m agent_lsp.lsp`, driven by pygls'
client, as bench/server_bench.py does), with the scripted model:

- spawn -> a session created (ACP: initialize + session/new answered;
  LSP: initialize + agent/session/new answered), median of --starts; and the
  CPU time the agent process spent until then (user + system), which a
  loaded machine changes less than the wall time
- latency added to the first streamed chunk: prompt -> first
  agent_message_chunk (ACP) or followup -> first assistant/chunk (LSP), minus
  a plain request round trip on the same connection (session/list), median
- chunks/s relayed: one reply of --chunks text deltas, prompt -> last chunk
  (and, for ACP, how many agent_message_chunk notifications carried them:
  deltas waiting to be sent are joined, as the LSP face joins them)
- peak RSS of the agent process during that stream
- edit prompt -> file written: a prompt whose reply is one edit_file call, to
  the moment the client is asked to write it (fs/write_text_file or
  workspace/applyEdit)
- cancel -> prompt answered `cancelled` (ACP; target 100 ms) / the session
  idle again (LSP), while the model is streaming
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import acp
import psutil
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "acp"))
from acp_harness import AcpTestClient, acp_agent  # noqa: E402
from server_bench import Bench, RssSampler, _followup_new_session  # noqa: E402

TARGET_CANCEL_MS = 100
EDIT = {"name": "edit_file", "arguments": {"path": "app.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}}
ms = 1000.0


class TimedClient(AcpTestClient):
    """Notes when the first chunk of each session and the first write arrive."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.first_chunk: dict[str, float] = {}
        self.written_at: float | None = None
        self.chars = 0
        self.chunk_updates = 0

    async def session_update(self, session_id, update, **kwargs):
        if update.session_update == "agent_message_chunk":
            self.first_chunk.setdefault(session_id, time.perf_counter())
            self.chars += len(update.content.text)
            self.chunk_updates += 1
        else:
            await super().session_update(session_id, update)

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.written_at = time.perf_counter()
        return await super().write_text_file(session_id, path, content)


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def text(s: str) -> list:
    return [acp.text_block(s)]


async def acp_figures(tmp: Path, workspace: Path, args) -> dict[str, float]:
    out: dict[str, float] = {}
    starts, cpu = [], []
    for i in range(args.starts):
        spawned = time.perf_counter()
        async with acp_agent(TimedClient(), tmp / f"acp-start-{i}", []) as conn:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
            starts.append(time.perf_counter() - spawned)
            cpu.append(cpu_seconds(conn.process.pid))
    out["start"] = statistics.median(starts)
    out["start_cpu"] = statistics.median(cpu)

    client = TimedClient()
    async with acp_agent(client, tmp / "acp-latency", [{"text": "hi"}] * (args.runs + 1)) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=text("warm up"))
        added = []
        for _ in range(args.runs):
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            sent = time.perf_counter()
            await conn.prompt(session_id=sid, prompt=text("hello"))
            first = client.first_chunk[sid] - sent
            sent = time.perf_counter()
            await conn.list_sessions(cwd=str(workspace))
            added.append(first - (time.perf_counter() - sent))
        out["added"] = statistics.median(added)

    client = TimedClient()
    async with acp_agent(client, tmp / "acp-stream", [{"text": "x" * args.chunks}]) as conn:
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        with RssSampler(conn.process.pid) as sampler:
            sent = time.perf_counter()
            await conn.prompt(session_id=sid, prompt=text("stream"))
            out["chunks_per_s"] = args.chunks / (time.perf_counter() - sent)
        assert client.chars == args.chunks, (client.chars, args.chunks)
        out["peak_rss"] = sampler.peak
        out["notifications"] = client.chunk_updates

    path = str(workspace / "app.py")
    client = TimedClient(buffers={path: "x = 1\n"})
    async with acp_agent(client, tmp / "acp-edit", [{"tools": [EDIT]}, {"text": "done"}, {"hang": "h"}]) as conn:
        warm = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=warm, prompt=text("warm up"))  # tools loaded, as in an editor used for a while
        await conn.cancel(session_id=warm)
        client.buffers[path], client.chars = "x = 1\n", 0
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        sent = time.perf_counter()
        await conn.prompt(session_id=sid, prompt=text("edit"))
        out["edit"] = client.written_at - sent
        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=text("wait")))
        while client.chars < len("done") + 1:  # the hanging reply has begun
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        sent = time.perf_counter()
        await conn.cancel(session_id=sid)
        assert (await running).stop_reason == "cancelled"
        out["cancel"] = time.perf_counter() - sent
    return out


async def lsp_figures(tmp: Path, workspace: Path, args) -> dict[str, float]:
    out: dict[str, float] = {}
    starts, cpu = [], []
    for i in range(args.starts):
        bench = Bench(workspace, tmp / f"lsp-start-{i}", [], tmp / "cache")
        spawned = time.perf_counter()
        await bench.start()
        await bench.client.protocol.send_request_async("agent/session/new", {"workspaceUri": workspace.as_uri()})
        starts.append(time.perf_counter() - spawned)
        cpu.append(cpu_seconds(bench.pid))
        await bench.stop()
    out["start"] = statistics.median(starts[1:] or starts)  # the first start writes the start-up code cache
    out["start_cpu"] = statistics.median(cpu[1:] or cpu)

    bench = Bench(workspace, tmp / "lsp-latency", [{"text": "hi"}], tmp / "cache")
    await bench.start()
    await bench.roundtrip()
    await _followup_new_session(bench, "warm up")
    added = []
    for _ in range(args.runs):
        _, first, _ = await _followup_new_session(bench, "hello")
        added.append(first - await bench.roundtrip())
    out["added"] = statistics.median(added)
    await bench.stop()

    bench = Bench(workspace, tmp / "lsp-stream", [{"text": "x" * args.chunks}], tmp / "cache")
    await bench.start()
    await bench.roundtrip()
    with RssSampler(bench.pid) as sampler:
        sent = time.perf_counter()
        sid, _, _ = await _followup_new_session(bench, "stream")
        out["chunks_per_s"] = args.chunks / (time.perf_counter() - sent)
    out["peak_rss"] = sampler.peak
    await bench.stop()

    bench = Bench(workspace, tmp / "lsp-edit", [{"tools": [EDIT]}, {"text": "done"}, {"hang": "h"}], tmp / "cache")
    written: list[float] = []

    @bench.client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params):
        written.append(time.perf_counter())
        return types.ApplyWorkspaceEditResult(applied=True)

    await bench.start()
    warm, _, _ = await _followup_new_session(bench, "warm up")  # tools loaded, as in an editor used for a while
    await bench.client.protocol.send_request_async("agent/cancel", {"sessionId": warm})
    written.clear()
    sent = time.perf_counter()
    sid, _, _ = await _followup_new_session(bench, "edit")
    out["edit"] = written[0] - sent
    bench.idle_at.pop(sid, None)
    await bench.client.protocol.send_request_async("agent/followup", {"sessionId": sid, "content": "wait"})
    while sid not in bench.first_chunk or bench.chars.get(sid, 0) < len("done") + 1:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    bench.waiters[sid] = asyncio.get_running_loop().create_future()
    sent = time.perf_counter()
    await bench.client.protocol.send_request_async("agent/cancel", {"sessionId": sid})
    await asyncio.wait_for(bench.waiters[sid], 30)
    out["cancel"] = time.perf_counter() - sent
    await bench.stop()
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.ERROR)  # the bench's LSP client ignores most notifications
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "app.py").write_text("x = 1\n")
        lsp = await lsp_figures(tmp_path, workspace, args)
        (workspace / "app.py").write_text("x = 1\n")
        acp_ = await acp_figures(tmp_path, workspace, args)

    rows = [
        ("spawn -> session created", "start", lambda v: f"{v * ms:.0f} ms"),
        ("  CPU time spent by then", "start_cpu", lambda v: f"{v * ms:.0f} ms"),
        ("added latency to the first chunk", "added", lambda v: f"{v * ms:.2f} ms"),
        (f"chunks/s relayed ({args.chunks} chunks)", "chunks_per_s", lambda v: f"{v:,.0f}"),
        ("peak RSS during the stream", "peak_rss", lambda v: f"{v / 2**20:.1f} MB"),
        ("edit prompt -> client asked to write", "edit", lambda v: f"{v * ms:.1f} ms"),
        ("cancel -> cancelled / idle", "cancel", lambda v: f"{v * ms:.1f} ms"),
    ]
    print(f"{'':40} {'ACP':>14} {'LSP':>14}")
    for label, key, fmt in rows:
        print(f"{label:40} {fmt(acp_[key]):>14} {fmt(lsp[key]):>14}")
    print(f"(ACP: the {args.chunks} chunks came in {acp_['notifications']:,} agent_message_chunk notifications)")
    print(f"(ACP cancel target < {TARGET_CANCEL_MS} ms; the LSP start is with its start-up code cache)")


if __name__ == "__main__":
    asyncio.run(main())
