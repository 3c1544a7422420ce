"""The floor for the agent host's start-up figures: a stdlib-only process that
speaks just enough LSP to be measured like agent-lsp, and nothing else.

    python bench/stdlib_floor.py MODEL_BASE_URL

It answers `initialize`, `agent/session/new` and `agent/followup`, and for a
followup relays the first text delta of the model server's OpenAI-compatible
stream as a `session/event` `assistant/chunk` notification (the shape the
clients read), then `agent/status idle`. No agent, no tools, no session file:
what an editor window could not start faster than (`bench/agent_host.py`).
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import urllib.parse

OUT = sys.stdout.buffer
LOCK = threading.Lock()


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    with LOCK:
        OUT.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        OUT.flush()


def read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
        elif line.strip() == b"" and length is not None:
            return json.loads(sys.stdin.buffer.read(length))


def relay_first_chunk(base: str, session_id: str, prompt: str) -> None:
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port)
    body = json.dumps({"model": "8", "stream": True, "messages": [{"role": "user", "content": prompt}]})
    connection.request("POST", url.path.rstrip("/") + "/chat/completions", body, {"content-type": "application/json"})
    response = connection.getresponse()
    sent = False
    for line in response:
        if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"].get("content")
        if delta and not sent:
            send({"jsonrpc": "2.0", "method": "session/event", "params": {"sessionId": session_id, "events": [
                {"seq": 1, "type": "assistant/chunk", "data": {"chunk": {"type": "text-delta", "text": delta}}}]}})
            sent = True
    connection.close()
    send({"jsonrpc": "2.0", "method": "agent/status", "params": {"sessionId": session_id, "status": "idle"}})


def main() -> None:
    base = sys.argv[1]
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"capabilities": {}, "serverInfo": {"name": "floor"}}})
        elif method == "agent/session/new":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"sessionId": "s1"}})
        elif method == "agent/followup":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"sessionId": "s1"}})
            threading.Thread(target=relay_first_chunk, args=(base, "s1", message["params"].get("content", "")),
                             daemon=True).start()
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        elif method == "exit":
            return
        elif msg_id is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "no such method"}})


if __name__ == "__main__":
    main()
