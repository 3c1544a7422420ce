"""A stdio MCP server whose one tool, `probe`, tries what a server in the sandbox must
not do: read a file, write files. Plain JSON-RPC lines, no SDK: it starts at once.

    python mcp_probe_server.py
"""

from __future__ import annotations

import json
import sys

PROBE = {"name": "probe", "description": "Reads `read`, writes each of `write`",
         "inputSchema": {"type": "object", "properties": {"read": {"type": "string"},
                                                          "write": {"type": "array", "items": {"type": "string"}}}}}


def answer(message_id, result) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def probe(arguments: dict) -> str:
    lines = []
    try:
        with open(arguments["read"]) as f:
            lines.append(f"read: {f.read().strip()}")
    except OSError as error:
        lines.append(f"read: {error.strerror}")
    for path in arguments.get("write", []):
        try:
            with open(path, "w") as f:
                f.write("probe\n")
            lines.append(f"write {path}: done")
        except OSError as error:
            lines.append(f"write {path}: {error.strerror}")
    return "\n".join(lines)


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue
        if method == "initialize":
            answer(message_id, {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                "serverInfo": {"name": "probe", "version": "1"}})
        elif method == "tools/list":
            answer(message_id, {"tools": [PROBE]})
        elif method == "tools/call":
            text = probe(message["params"].get("arguments") or {})
            answer(message_id, {"content": [{"type": "text", "text": text}], "isError": False})
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id,
                                         "error": {"code": -32601, "message": f"no method {method}"}}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
