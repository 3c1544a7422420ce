"""A hostile MCP server answers one tool call with 50 MB in one message (over
stdio, then over HTTP): what the language server's memory does meanwhile.
Prints its RSS before the turn, its peak during it and its RSS after it
(targets: peak under +60 MB, after within 10 MB of before). The check that
the result is cut and the server goes on: tests/mcp/test_mcp_huge.py.
Run: .venv/bin/python bench/mcp_huge.py [MB]
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
for folder in ("lsp", "lsp_tools", "mcp"):
    sys.path.insert(0, str(TESTS / folder))

from mcp_http_server import HttpMcpServer  # noqa: E402
from test_mcp_huge import HUGE  # noqa: E402
from test_mcp_wire import run_turn  # noqa: E402
from tools_harness import call, text_of, tool_server  # noqa: E402


def memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM starts again from the RSS now


async def main(megabytes: int) -> None:
    logging.disable(logging.INFO)  # the harness and the HTTP server log every message
    chars = megabytes * 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        async with HttpMcpServer() as http:
            servers = {"huge": HUGE, "web": {"type": "http", "url": http.url, "headers": {"Authorization": "Bearer secret-token"}}}
            async with tool_server(folders=[workspace], sessions_dir=Path(tmp) / "s", settings={"mcpServers": servers}) as editor:
                editor.permission_answer = "always"
                pid = editor.server_pid
                # warm: both servers connected, their tools called once
                sid, _ = await run_turn(editor, [call("mcp__huge__huge", chars=10), call("mcp__web__big", chars=10), {"text": "warm"}])
                for transport, tool in (("stdio", "mcp__huge__huge"), ("http", "mcp__web__big")):
                    before = memory_mb(pid)["VmRSS"]
                    reset_peak(pid)
                    _, (result,) = await run_turn(editor, [call(tool, chars=chars), {"text": "done"}], session_id=sid)
                    after = memory_mb(pid)
                    print(f"{transport}: {megabytes} MB result: RSS before {before:.0f} MB, peak {after['VmHWM']:.0f} MB "
                          f"(+{after['VmHWM'] - before:.0f}), after {after['VmRSS']:.0f} MB ({after['VmRSS'] - before:+.0f}); "
                          f"the model got {len(text_of(result)):,} characters")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
