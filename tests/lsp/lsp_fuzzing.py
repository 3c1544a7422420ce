"""Fuzzing the server's JSON-RPC surface: a raw stdio client and hypothesis
strategies built from the protocol's own models (`agent_lsp.lsp.protocol`).

Each generated case is a message and the answer it must get:
- "ok": valid or mutated params of a real method: a result or -32602 (-32010 for
  a session another process holds), never anything else;
- an exact code: -32600 for a broken envelope, -32601 for an unknown method.
Every case has a fresh id, so "exactly one answer" can be checked per id.

Used by tests/lsp/test_lsp_fuzz.py (seeded, bounded) and bench/lsp_fuzz.py (long).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from agent_lsp.lsp import protocol as wire

OMITTED = object()
SERVER_PATH_MARKERS = ("Traceback", 'File "', ".py\"", "site-packages")

# ------------------------------------------------------------- a raw client


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """`python -m agent_lsp.lsp` driven with raw frames; every answer is kept by id."""

    def __init__(self, tmp: Path, *, workspace: Path | None = None):
        self.tmp = tmp
        self.workspace = workspace or tmp / "ws"
        self.workspace.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp / "cache"), AGENT_LSP_CONFIG=str(tmp / "none.toml"))
        self.proc = subprocess.Popen([sys.executable, "-m", "agent_lsp.lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=open(tmp / "server.log", "wb"), env=env)
        self.answers: dict[Any, list[dict]] = {}
        self.null_id: list[dict] = []  # answers to messages whose id could not be read
        self.notifications: list[dict] = []  # the server's notifications, in order
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def next_id(self) -> Any:
        n = next(self._ids)
        return n if n % 2 else f"fz-{n}"  # integers and strings, both valid ids

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._changed:
                        self._changed.notify_all()
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                elif not line.strip() and length is not None:
                    break
            message = json.loads(out.read(length))
            if "method" in message:
                if "id" in message:  # a request to the client: answer it plainly
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                else:
                    with self._changed:
                        self.notifications.append(message)
                        self._changed.notify_all()
                continue
            with self._changed:
                if message.get("id") is None:
                    self.null_id.append(message)
                else:
                    self.answers.setdefault(message["id"], []).append(message)
                self._changed.notify_all()

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(message))
        self.proc.stdin.flush()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self, msg_id: Any, timeout: float = 30.0) -> dict:
        with self._changed:
            if not self._changed.wait_for(lambda: msg_id in self.answers or self.proc.poll() is not None, timeout):
                raise AssertionError(f"no answer to {msg_id!r} within {timeout} s")
            if msg_id not in self.answers:
                raise AssertionError(f"the server ended (exit {self.proc.returncode}) before answering {msg_id!r}")
            return self.answers[msg_id][0]

    def null_id_answers(self, count: int, timeout: float = 30.0) -> list[dict]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.null_id) >= count or self.proc.poll() is not None, timeout):
                raise AssertionError(f"{len(self.null_id)} of {count} answers with id null within {timeout} s")
            return list(self.null_id)

    def notification(self, method: str, where: Any = lambda params: True, timeout: float = 30.0) -> dict:
        """The params of the first notification `method` whose params satisfy `where`."""
        def found() -> dict | None:
            return next((n["params"] for n in self.notifications if n["method"] == method and where(n["params"])), None)
        with self._changed:
            if not self._changed.wait_for(lambda: found() is not None or self.proc.poll() is not None, timeout):
                raise AssertionError(f"no {method} notification within {timeout} s")
            params = found()
            if params is None:
                raise AssertionError(f"the server ended (exit {self.proc.returncode}) before sending {method}")
            return params

    def request(self, method: str, params: Any = OMITTED) -> dict:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not OMITTED:
            message["params"] = params
        return self.exchange(message)

    def exchange(self, message: dict, timeout: float = 30.0) -> dict:
        """Send a message (with a fresh id) and wait for its answer."""
        message = dict(message, id=self.next_id())
        self.send(message)
        return self.answer(message["id"], timeout)

    def initialize(self) -> dict:
        answer = self.request("initialize", {
            "processId": None, "rootUri": self.workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"sessionsDir": str(self.tmp / "sessions"),
                                      "model": {"provider": "scripted", "script": [{"text": "ok"}] * 5000}}})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    def stop(self) -> int:
        try:
            self.request("shutdown")
            self.send({"jsonrpc": "2.0", "method": "exit"})
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def problems_of(answer: dict, expected: str | int) -> list[str]:
    """What is wrong with an answer, given the case's expectation."""
    problems = []
    error = answer.get("error")
    if expected == "ok":
        if error is not None and error.get("code") not in (-32602, wire.SESSION_IN_USE_CODE):
            problems.append(f"code {error.get('code')} (expected a result or -32602)")
    elif error is None or error.get("code") != expected:
        problems.append(f"got {json.dumps(answer)[:200]} (expected error {expected})")
    if error is not None:
        text = json.dumps(error)
        if "data" in error and "traceback" in json.dumps(error["data"]):
            problems.append("a traceback in error.data")
        if any(marker in text for marker in SERVER_PATH_MARKERS):
            problems.append(f"server internals in the error: {text[:200]}")
        if len(error.get("message", "")) > 2000:
            problems.append(f"an error message of {len(error['message'])} characters")
    return problems


# ------------------------------------------------------- strategies from the schema

ODD_STRINGS = st.sampled_from([
    "", " ", "\x00", "\ud800", "\u202e\u0645\u0631\u062d\u0628\u0627", "🧪" * 50, "../../etc/passwd", "a/b\\c",
    ".hidden", "x" * 300, "é" * 200, "\n\r\t", "null", "0", "file:///", "file:///nonexistent/dir", "%00",
    "00000000-0000-0000-0000-000000000000",
])
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(allow_nan=False, allow_infinity=False),
                         st.text(max_size=20), ODD_STRINGS)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                 st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                           max_leaves=12)


def _huge_strings(max_mb: int) -> st.SearchStrategy[str]:
    return st.integers(1, max_mb).map(lambda mb: "x" * (mb * 2**20))


def from_schema(schema: dict, defs: dict) -> st.SearchStrategy[Any]:
    """Values valid for a (pydantic-generated) JSON Schema."""
    if "$ref" in schema:
        return st.deferred(lambda: from_schema(defs[schema["$ref"].rsplit("/", 1)[1]], defs))
    if "anyOf" in schema:
        return st.one_of([from_schema(option, defs) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(st.text(max_size=30), ODD_STRINGS)
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", -10), max_value=1000)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), defs), max_size=3)
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", ()))
        props = schema["properties"]
        return st.fixed_dictionaries(
            {k: from_schema(v, defs) for k, v in props.items() if k in required},
            optional={k: from_schema(v, defs) for k, v in props.items() if k not in required},
        )
    return JSON_VALUES


@st.composite
def _mutated(draw, schema: dict, defs: dict, huge_mb: int) -> Any:
    """A valid value with one thing broken: a field of the wrong type, a required
    field missing, an unknown field, a huge or odd string, or no object at all."""
    value = dict(draw(from_schema(schema, defs)))
    props = list(schema.get("properties", {}))
    how = draw(st.sampled_from(["wrong-type", "missing", "extra", "huge", "odd", "not-an-object"]))
    if how == "not-an-object":
        return draw(st.one_of(st.none(), st.lists(JSON_SCALARS, max_size=3), JSON_SCALARS))
    if how == "extra":
        value[draw(st.text(min_size=1, max_size=12))] = draw(JSON_VALUES)
        return value
    if not props:
        return value
    key = draw(st.sampled_from(props))
    if how == "missing":
        value.pop(key, None)
    elif how == "wrong-type":
        value[key] = draw(JSON_VALUES)
    elif how == "huge" and huge_mb:
        value[key] = draw(_huge_strings(huge_mb))
    else:
        value[key] = draw(ODD_STRINGS)
    return value


def params_for(method: str, huge_mb: int) -> st.SearchStrategy[Any]:
    schema = wire.CLIENT_REQUESTS[method][0].model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    return st.one_of(from_schema(schema, defs), _mutated(schema, defs, huge_mb))


NOTIFICATION_METHODS = ["initialized", "textDocument/didClose", "$/setTrace", "textDocument/didOpen", "exit",
                        "$/cancelRequest", "workspace/didChangeConfiguration"]


@st.composite
def envelope_fault(draw) -> tuple[dict, int]:
    """A request (its id is set by the caller) whose envelope is wrong: -32600."""
    method = draw(st.sampled_from(list(wire.CLIENT_REQUESTS)))
    how = draw(st.sampled_from(["jsonrpc", "method-type", "notification-with-id", "no-method"]))
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {}}
    if how == "jsonrpc":
        message["jsonrpc"] = draw(st.one_of(st.sampled_from(["1.0", "2", "2.0 ", ""]), st.none(), st.integers()))
        if draw(st.booleans()):
            del message["jsonrpc"]
    elif how == "method-type":
        message["method"] = draw(st.one_of(st.none(), st.integers(), st.booleans(), st.lists(st.integers(), max_size=2)))
    elif how == "notification-with-id":
        message["method"] = draw(st.sampled_from([m for m in NOTIFICATION_METHODS if m != "exit"]))
    else:
        del message["method"]
    return message, -32600


def cases(session_ids: list[str], huge_mb: int = 1) -> st.SearchStrategy[tuple[dict, str | int]]:
    """(a request without its id yet, the answer it must get)."""
    known = st.sampled_from(session_ids) if session_ids else st.text(max_size=5)
    session_id = st.one_of(known, ODD_STRINGS, st.text(min_size=0, max_size=40), st.just("s" * 5000))

    @st.composite
    def request(draw) -> tuple[dict, str | int]:
        method = draw(st.sampled_from(list(wire.CLIENT_REQUESTS)))
        params = draw(params_for(method, huge_mb))
        if isinstance(params, dict) and "sessionId" in params and draw(st.booleans()):
            params["sessionId"] = draw(session_id)  # often a session that exists
        message = {"jsonrpc": "2.0", "method": method}
        if draw(st.integers(0, 9)) or params is not None:
            message["params"] = params
        return message, "ok"

    unknown = st.builds(lambda m: ({"jsonrpc": "2.0", "method": m, "params": {}}, -32601),
                        st.sampled_from(["agent/nope", "agent/session/nope", "textDocument/nope", "$/nope", ""]))
    return st.one_of(request(), request(), request(), envelope_fault(), unknown)
