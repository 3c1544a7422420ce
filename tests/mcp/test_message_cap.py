"""The cap on one message from an MCP server (agent_lsp/mcp/message_cap.py),
fed as a stdio server's output arrives: small messages pass as they are, a
long answer becomes a short one for the same request, a long request or
notification of the server is dropped."""

from __future__ import annotations

import json

from agent_lsp.mcp.message_cap import LineCap

LIMIT = 1000


def fed(*messages: bytes, piece: int = 97) -> list[dict]:
    out: list[bytes] = []
    cap = LineCap(out.append, LIMIT)
    data = b"".join(m + b"\n" for m in messages)
    for start in range(0, len(data), piece):
        cap.feed(data[start:start + piece])
    cap.end()
    return [json.loads(line) for line in b"".join(out).splitlines()]


def test_small_messages_pass_and_long_ones_are_cut_for_the_same_request():
    small = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    tool = {"result": {"content": [{"type": "text", "text": "é" * 3000}]}, "jsonrpc": "2.0", "id": "call-2"}  # id last
    other = {"jsonrpc": "2.0", "id": 3, "result": {"contents": [{"uri": "x", "text": "y" * 3000}]}}
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "z" * 3000}}
    answers = fed(*(json.dumps(m, ensure_ascii=False).encode() for m in (small, tool, note, other, small)))
    assert answers[0] == answers[-1] == small  # the notification is gone
    cut = answers[1]
    assert cut["id"] == "call-2" and cut["result"]["isError"] is True
    (said, kept) = cut["result"]["content"]
    size = len(json.dumps(tool, ensure_ascii=False).encode())
    assert said["text"].startswith(f"[The MCP server's answer was {size:,} bytes, over the limit of {LIMIT:,} bytes")
    assert 400 < len(kept["text"]) < 1000 and set(kept["text"]) == {"é"}  # its start, to a whole character
    assert answers[2]["id"] == 3 and "it was cut" in answers[2]["error"]["message"]
