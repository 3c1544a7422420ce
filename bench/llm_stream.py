"""Provider stream benchmark.

1. SSE parse + normalise throughput, in process: a synthetic OpenAI and
   Anthropic stream of N text deltas, fed in 16 KiB network reads through
   `SseDecoder` and the provider's normaliser. Target: >= 100,000 chunks/s.
2. The same through the real provider over HTTP on 127.0.0.1 (httpx included).
3. Added latency, first byte -> first chunk: in process (decode + normalise
   the first read), and over HTTP as (server write -> provider's first chunk)
   minus (server write -> raw httpx first bytes). Target: < 1 ms.

Run: .venv/bin/python bench/llm_stream.py [N]
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import sys
import time

import httpx

from agent_lsp.llm.anthropic import AnthropicProvider, AnthropicStream
from agent_lsp.llm.openai import OpenAIProvider, OpenAIStream
from agent_lsp.llm.sse import SseDecoder
from agent_lsp.llm.transport import StreamContext
from agent_lsp.llm.types import ModelRequest

READ = 16 * 1024


def openai_stream(n: int) -> bytes:
    head = '{"id":"chatcmpl-B","object":"chat.completion.chunk","created":1745678496,"model":"gpt-4.1-nano-2025-04-14","service_tier":"default","system_fingerprint":"fp_38343a2f8f","choices":[{"index":0,"delta":'
    parts = [f"data: {head}{{\"role\":\"assistant\",\"content\":\"\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"]
    for i in range(n):
        parts.append(f"data: {head}{{\"content\":\" tok{i % 97}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null,\"obfuscation\":\"xY\"}}\n\n")
    parts.append(f"data: {head}{{}},\"logprobs\":null,\"finish_reason\":\"stop\"}}],\"usage\":null}}\n\n")
    parts.append('data: {"id":"chatcmpl-B","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}\n\ndata: [DONE]\n\n' % (n, n + 10))
    return "".join(parts).encode()


def anthropic_stream(n: int) -> bytes:
    parts = [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}\n\n',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
    ]
    for i in range(n):
        parts.append(f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":" tok{i % 97}"}}}}\n\n')
    parts.append('event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n')
    parts.append('event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}\n\n' % n)
    parts.append('event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return "".join(parts).encode()


def reads(data: bytes, size: int = READ) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def normalise(kind: str, pieces: list[bytes]) -> int:
    ctx = StreamContext("bench", "m")
    decoder = SseDecoder()
    count = 0
    if kind == "openai":
        state = OpenAIStream(ctx)
        for piece in pieces:
            for event in decoder.feed(piece):
                count += len(state.feed(event.data))
    else:
        state = AnthropicStream(ctx)
        for piece in pieces:
            for event in decoder.feed(piece):
                count += len(state.feed(event.event, event.data))
    return count + len(state.end())


def bench_in_process(n: int) -> None:
    for kind, make in (("openai", openai_stream), ("anthropic", anthropic_stream)):
        pieces = reads(make(n))
        best = float("inf")
        for _ in range(3):
            start = time.process_time()  # CPU time: other processes on the machine do not count
            chunks = normalise(kind, pieces)
            best = min(best, time.process_time() - start)
        size = sum(map(len, pieces))
        print(f"  {kind:9} in process: {chunks / best:>10,.0f} chunks per CPU second  ({size / best / 1e6:.1f} MB/s, {chunks:,} chunks)")


def bench_first_chunk_in_process() -> None:
    for kind, make in (("openai", openai_stream), ("anthropic", anthropic_stream)):
        first_read = reads(make(3), 1500)[0]  # what one TCP segment would carry
        samples = []
        for _ in range(2000):
            start = time.perf_counter()
            ctx = StreamContext("bench", "m")
            decoder = SseDecoder()
            state = OpenAIStream(ctx) if kind == "openai" else AnthropicStream(ctx)
            out = []
            for event in decoder.feed(first_read):
                out.extend(state.feed(event.data) if kind == "openai" else state.feed(event.event, event.data))
                if out:
                    break
            samples.append(time.perf_counter() - start)
        print(f"  {kind:9} first read -> first chunk (in process): median {statistics.median(samples) * 1e6:.1f} us")


class StreamServer:
    """Serves `body` (chunked, one write per `piece`) and notes when it wrote the first piece."""

    def __init__(self, pieces: list[bytes], gap_s: float = 0.0):
        self.pieces = pieces
        self.gap_s = gap_s
        self.first_write: float = 0.0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
        await reader.readexactly(length[0] if length else 0)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(self.gap_s)
        for i, piece in enumerate(self.pieces):
            if i == 0:
                self.first_write = time.perf_counter()
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()


async def serve(pieces: list[bytes], gap_s: float = 0.0) -> tuple[StreamServer, asyncio.base_events.Server, str]:
    state = StreamServer(pieces, gap_s)
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    return state, server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def request(provider: str) -> ModelRequest:
    return ModelRequest(provider=provider, model="m", system="", messages=({"role": "user", "content": [{"type": "text", "text": "hi"}]},))


def _server_process(kind: str, n: int, ports: "multiprocessing.Queue[int]") -> None:
    async def run() -> None:
        make = openai_stream if kind == "openai" else anthropic_stream
        _, server, url = await serve(reads(make(n)))
        ports.put(int(url.rsplit(":", 1)[1]))
        await asyncio.sleep(600)

    asyncio.run(run())


async def bench_http(n: int) -> None:
    """The server runs in another process (its own core), as a real one would."""
    for kind in ("openai", "anthropic"):
        ports: multiprocessing.Queue[int] = multiprocessing.Queue()
        process = multiprocessing.Process(target=_server_process, args=(kind, n, ports), daemon=True)
        process.start()
        url = f"http://127.0.0.1:{ports.get(timeout=30)}"
        provider = OpenAIProvider(base_url=url + "/v1") if kind == "openai" else AnthropicProvider(base_url=url)
        start, cpu = time.perf_counter(), time.process_time()
        chunks, deltas = 0, 0
        async for chunk in provider.stream(request(kind)):
            chunks += 1
            # the deltas of one network read come as one chunk: count the deltas in it
            if chunk.get("type") == "text-delta":
                deltas += chunk["text"].count(" tok")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        await provider.aclose()
        process.terminate()
        process.join()
        print(
            f"  {kind:9} over HTTP:   {deltas / cpu:>10,.0f} deltas per CPU second, {deltas / elapsed:,.0f} deltas/s wall"
            f"  ({deltas:,} of {n:,} deltas in {chunks:,} chunks; httpx included; server in another process)"
        )


async def bench_first_chunk_http(rounds: int = 200) -> None:
    for kind, make in (("openai", openai_stream), ("anthropic", anthropic_stream)):
        pieces = [make(3)]
        raw, ours = [], []
        client = httpx.AsyncClient()
        provider = OpenAIProvider(base_url="http://x/v1") if kind == "openai" else AnthropicProvider(base_url="http://x")
        for _ in range(rounds):
            state, server, url = await serve(pieces, gap_s=0.002)
            async with client.stream("POST", url, json={}) as response:
                async for _ in response.aiter_bytes():
                    raw.append(time.perf_counter() - state.first_write)
                    break
            server.close()
            state, server, url = await serve(pieces, gap_s=0.002)
            provider._url = url + ("/v1/chat/completions" if kind == "openai" else "/v1/messages")  # bench only
            stream = provider.stream(request(kind))
            await anext(stream)
            ours.append(time.perf_counter() - state.first_write)
            await stream.aclose()
            server.close()
        await client.aclose()
        await provider.aclose()
        added = statistics.median(ours) - statistics.median(raw)
        print(
            f"  {kind:9} server write -> first chunk over HTTP: median {statistics.median(ours) * 1e6:.0f} us"
            f" (raw httpx first bytes {statistics.median(raw) * 1e6:.0f} us; added {added * 1e6:.0f} us)"
        )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    print(f"SSE parse + normalise, {n:,} text deltas per stream (target >= 100,000 chunks/s):")
    bench_in_process(n)
    asyncio.run(bench_http(n))
    print("Added latency, first byte received -> first chunk delivered (target < 1 ms):")
    bench_first_chunk_in_process()
    asyncio.run(bench_first_chunk_http())


if __name__ == "__main__":
    main()
