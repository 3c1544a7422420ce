"""A model server with a small context window, as llama.cpp runs one.

`WindowedModel` answers the model requests of a `FakeServer`: it counts a
request's tokens by its own rule (about 3.3 characters a token plus framing,
not the agent's characters / 4), rejects a prompt that does not fit its
window with llama.cpp's exact error (HTTP 400, `exceed_context_size_error`,
`n_prompt_tokens`, `n_ctx`), and otherwise answers with a tool call (while
the batches the user asked for, "start batch N", owe calls) or text,
reporting usage. A compaction's summary
request gets a short summary. `GET /props` tells the window, as llama.cpp's
server does.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from llm_fake_server import FakeServer, Reply, Seen

CHARS_PER_TOKEN = 3.3
MESSAGE_TOKENS = 6


def _sse(chunks: list[dict[str, Any]]) -> Reply:
    return Reply.sse(b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n",
                     awkward=False)


class WindowedModel:
    def __init__(self, server: FakeServer, n_ctx: int, *, tool: str, steps_per_turn: int,
                 arguments: Callable[[int], dict[str, Any]] = lambda n: {"chunk": n}):
        self.n_ctx = n_ctx
        self.tool = tool
        self.arguments = arguments  # the arguments of the n-th tool call (from 1)
        self.steps_per_turn = steps_per_turn
        self.rejected: list[int] = []  # prompt sizes answered with a 400
        self.prompts: list[int] = []  # prompt sizes answered
        self.summaries = 0
        self._batches: set[int] = set()
        self._calls = 0
        server.respond = self.reply
        server.routes["GET /props"] = Reply.json(200, {"default_generation_settings": {"n_ctx": n_ctx},
                                                       "total_slots": 1})

    def count(self, body: dict[str, Any]) -> int:
        chars = len(json.dumps(body.get("tools") or [], ensure_ascii=False))
        for m in body.get("messages") or ():
            content = m.get("content")
            chars += len(content if isinstance(content, str) else json.dumps(content or "", ensure_ascii=False))
            chars += len(json.dumps(m.get("tool_calls") or "", ensure_ascii=False))
        return int(chars / CHARS_PER_TOKEN) + MESSAGE_TOKENS * len(body.get("messages") or ())

    def reply(self, seen: Seen) -> Reply:
        body = seen.body
        n = self.count(body)
        if n >= self.n_ctx:
            self.rejected.append(n)
            return Reply.json(400, {"error": {"code": 400, "message": "the request exceeds the available context size, "
                                              "try increasing it", "type": "exceed_context_size_error",
                                              "n_prompt_tokens": n, "n_ctx": self.n_ctx}})
        self.prompts.append(n)
        usage = {"prompt_tokens": n, "completion_tokens": 20, "total_tokens": n + 20}
        last = (body["messages"][-1].get("content") or "") if body.get("messages") else ""
        if "summar" in str(last).lower() and not body.get("tools"):
            self.summaries += 1
            return self._text(f"Summary {self.summaries}: read chunks, noted their checksums; keep reading.", usage)
        if "summar" in str(last).lower():
            self.summaries += 1
            return self._text(f"Summary {self.summaries}: the chunks so far were read.", usage)
        for m in body["messages"]:  # each batch the user asked for is worth `steps_per_turn` tool calls
            found = re.search(r"start batch (\d+)", str(m.get("content") or "")) if m.get("role") == "user" else None
            if found:
                self._batches.add(int(found.group(1)))
        if self._calls < self.steps_per_turn * len(self._batches):
            self._calls += 1
            call = {"index": 0, "id": f"call_{self._calls}", "type": "function",
                    "function": {"name": self.tool, "arguments": json.dumps(self.arguments(self._calls))}}
            return _sse([{"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
                         {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                         {"choices": [], "usage": usage}])
        return self._text("All chunks read.", usage)

    @staticmethod
    def _text(text: str, usage: dict[str, int]) -> Reply:
        return _sse([{"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
                     {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                     {"choices": [], "usage": usage}])
