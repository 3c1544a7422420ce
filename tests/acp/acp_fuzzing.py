"""Fuzzing the ACP face's JSON-RPC surface: a raw line client of the real
`agent-lsp acp` process and hypothesis strategies, beside the LSP face's
(tests/lsp/lsp_fuzzing.py, whose value strategies are reused).

Each generated case is one line and the answer it must get:
- "ok": a real method with valid or mutated params: a result or a refusal
  (-32602, -32601, -32010, or -32011 for a turn that failed), never -32603;
- an exact code: -32600 for a broken envelope, -32700 for a line that is not
  JSON (or nested too deeply to parse).
`id_readable` says whether the answer carries the line's id or `id: null`.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from acp_harness import agent_env, settings_arg
from lsp_fuzzing import JSON_SCALARS, JSON_VALUES, ODD_STRINGS, SERVER_PATH_MARKERS

# a bad param, a method the face does not serve, a session held elsewhere, a turn that ended in a failure
# (a prompt too big for the model's window: the failure is the model's, said as such)
REFUSALS = (-32602, -32601, -32010, -32011)


class RawAgent:
    """`agent-lsp acp` driven with raw lines; every answer is kept by id, those
    with `id: null` in order. Questions from the agent are answered plainly
    (a permission question: cancelled)."""

    def __init__(self, tmp: Path, script: list[Any] | None = None):
        self.tmp = tmp
        self.workspace = tmp / "ws"
        self.workspace.mkdir(parents=True, exist_ok=True)
        sessions = tmp / "sessions"
        self.log_path = tmp / "agent.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_lsp", "acp", *settings_arg(sessions, script or [{"text": "ok"}] * 5000)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.log_path, "wb"), env=agent_env(sessions),
            cwd=self.workspace)
        self.answers: dict[Any, list[dict]] = {}
        self.null_id: list[dict] = []
        self.updates: list[dict] = []
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._write = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def next_id(self) -> Any:
        n = next(self._ids)
        return n if n % 2 else f"fz-{n}"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "method" in message:
                if "id" in message:  # a question of the agent
                    if message["method"] == "session/request_permission":
                        self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "cancelled"}}})
                    else:
                        self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})
                elif message["method"] == "session/update":
                    self.updates.append(message["params"])
                continue
            with self._changed:
                if message.get("id") is None:
                    self.null_id.append(message)
                else:
                    self.answers.setdefault(message["id"], []).append(message)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def send_line(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write:
            self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
            self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_line(json.dumps(message).encode())

    def answer(self, msg_id: Any, timeout: float = 30.0) -> dict:
        with self._changed:
            if not self._changed.wait_for(lambda: msg_id in self.answers or self.proc.poll() is not None, timeout):
                raise AssertionError(f"no answer to {msg_id!r} within {timeout} s")
            if msg_id not in self.answers:
                raise AssertionError(f"the agent ended (exit {self.proc.returncode}) before answering {msg_id!r}")
            return self.answers[msg_id][0]

    def null_id_answers(self, count: int, timeout: float = 30.0) -> list[dict]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.null_id) >= count or self.proc.poll() is not None, timeout):
                raise AssertionError(f"{len(self.null_id)} of {count} answers with id null within {timeout} s")
            if len(self.null_id) < count:
                raise AssertionError(f"the agent ended (exit {self.proc.returncode}) with {len(self.null_id)} of {count} "
                                     "answers with id null")
            return list(self.null_id)

    def request(self, method: str, params: Any) -> dict:
        msg_id = self.next_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.answer(msg_id)

    def exchange(self, line: Any, id_readable: bool, timeout: float = 60.0) -> dict:
        """Send one case (a message without its id yet, or raw bytes) and wait for its answer."""
        if isinstance(line, bytes):
            before = len(self.null_id)
            self.send_line(line)
            return self.null_id_answers(before + 1, timeout)[before]
        if id_readable:
            message = dict(line, id=self.next_id())
            self.send(message)
            return self.answer(message["id"], timeout)
        before = len(self.null_id)
        self.send(line)
        return self.null_id_answers(before + 1, timeout)[before]

    def initialize(self) -> dict:
        return self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def new_session(self) -> str:
        return self.request("session/new", {"cwd": str(self.workspace), "mcpServers": []})["result"]["sessionId"]

    def stop(self) -> int | None:
        """Close stdin (the client leaves); the exit code."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def problems_of(answer: dict, expected: str | int, id_readable: bool) -> list[str]:
    """What is wrong with an answer, given the case's expectation."""
    problems = []
    error = answer.get("error")
    if expected == "ok":
        if error is not None and error.get("code") not in REFUSALS:
            problems.append(f"code {error.get('code')}: {json.dumps(error)[:300]} (expected a result or a refusal)")
    elif error is None or error.get("code") != expected:
        problems.append(f"got {json.dumps(answer)[:300]} (expected error {expected})")
    if not id_readable and answer.get("id", "missing") is not None:
        problems.append(f"answered with id {answer.get('id')!r}, expected null")
    if error is not None:
        text = json.dumps(error)
        if any(marker in text for marker in SERVER_PATH_MARKERS):
            problems.append(f"server internals in the error: {text[:300]}")
        if len(error.get("message", "")) > 2000:
            problems.append(f"an error message of {len(error['message'])} characters")
    return problems


# ------------------------------------------------------------- strategies


def _nested(depth: int, kind: str) -> str:
    return ("[" * depth + "]" * depth) if kind == "array" else ('{"a":' * depth + "1" + "}" * depth)


GARBAGE = st.sampled_from([
    b"{this is not json", b"\xff\xfe not utf-8", b'{"jsonrpc": "2.0", "id": 1, "method": "session/list"',
    b"}", b"[", b"nul\x00l", b'{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}}', b"NaN x",
    b'{"a": 1} {"b": 2}', b"\x1b[2J\x07",
])


@st.composite
def _line_fault(draw) -> tuple[Any, int, bool]:
    """A line that is not a JSON-RPC message at all: answered with `id: null`."""
    how = draw(st.sampled_from(["garbage", "not-an-object", "deep", "bad-id"]))
    if how == "garbage":
        return draw(GARBAGE), -32700, False
    if how == "not-an-object":
        value = draw(st.one_of(st.none(), st.lists(JSON_VALUES, max_size=3), JSON_SCALARS))
        return json.dumps(value).encode(), -32600, False
    if how == "deep":
        depth = draw(st.sampled_from([1000, 5000, 100_000]))
        nested = _nested(depth, draw(st.sampled_from(["array", "object"])))
        return ('{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {"_meta": {"x": %s}}}' % nested).encode(), -32700, False
    bad_id = draw(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
                            st.booleans(), st.lists(st.integers(), max_size=2), st.just({"a": 1})))
    return {"jsonrpc": "2.0", "id": bad_id, "method": "session/list", "params": {}}, -32600, False


@st.composite
def _envelope_fault(draw) -> tuple[Any, int, bool]:
    """A request with a readable id whose envelope is wrong: -32600 with its id."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "session/list", "params": {}}
    how = draw(st.sampled_from(["jsonrpc", "method-type", "no-method"]))
    if how == "jsonrpc":
        message["jsonrpc"] = draw(st.one_of(st.sampled_from(["1.0", "2", "2.0 ", ""]), st.none(), st.integers()))
        if draw(st.booleans()):
            del message["jsonrpc"]
    elif how == "method-type":
        message["method"] = draw(st.one_of(st.none(), st.integers(), st.booleans(), st.lists(st.integers(), max_size=2)))
    else:
        del message["method"]
    return message, -32600, True


@st.composite
def _mutated(draw, valid: st.SearchStrategy[dict[str, Any]]) -> Any:
    """Valid params, or (one time in two) with one thing broken: a field left out,
    of the wrong type, odd or huge, or params that are no object at all."""
    params = dict(draw(valid))
    how = draw(st.sampled_from(["keep", "keep", "drop", "wrong", "odd", "huge", "not-an-object"]))
    if how == "not-an-object":
        return draw(st.one_of(st.none(), st.lists(JSON_SCALARS, max_size=3), JSON_SCALARS))
    if how == "keep" or not params:
        return params
    key = draw(st.sampled_from(sorted(params)))
    if how == "drop":
        del params[key]
    elif how == "wrong":
        params[key] = draw(JSON_VALUES)
    elif how == "odd":
        params[key] = draw(ODD_STRINGS)
    else:
        params[key] = "x" * (draw(st.integers(1, 4)) * 2**20)
    return params


def cases(workspace: Path, session_ids: list[str]) -> st.SearchStrategy[tuple[Any, str | int, bool]]:
    """(a case without its id yet, the answer it must get, whether that answer carries its id)."""
    ws = str(workspace)
    odd_id = st.one_of(ODD_STRINGS, st.text(max_size=40), st.just("s" * 5000))
    session_id = st.booleans().flatmap(lambda odd: odd_id if odd else st.sampled_from(session_ids))
    text = st.one_of(st.text(max_size=60), ODD_STRINGS, st.sampled_from(["/compact", "/revert 9", "/nope x", "/revert"]))
    uri = st.one_of(st.just((workspace / "a.py").as_uri()), ODD_STRINGS)
    block = st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": text}),
        st.fixed_dictionaries({"type": st.just("resource_link"), "name": text, "uri": uri}),
        st.fixed_dictionaries({"type": st.just("resource"), "resource": st.fixed_dictionaries({"uri": uri, "text": text})}),
        st.fixed_dictionaries({"type": st.just("image"), "data": st.just("aGk="), "mimeType": st.just("image/png")}),
    )
    # a real folder and no MCP servers of the client: the fuzz runs nothing and opens no other folder
    cwd = st.one_of(st.just(ws), ODD_STRINGS, st.just(str(workspace / "missing")))
    methods: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "session/list": st.fixed_dictionaries({}, optional={"cwd": cwd, "cursor": text}),
        "session/load": st.fixed_dictionaries({"cwd": st.just(ws), "mcpServers": st.just([]), "sessionId": session_id}),
        "session/set_mode": st.fixed_dictionaries({"sessionId": session_id, "modeId": st.one_of(st.sampled_from(["default", "plan"]), text)}),
        "session/set_config_option": st.fixed_dictionaries({"sessionId": session_id, "configId": st.one_of(st.just("model"), text),
                                                            "value": st.one_of(st.just("scripted/scripted"), text)}),
        "session/prompt": st.fixed_dictionaries({"sessionId": session_id, "prompt": st.lists(block, min_size=1, max_size=3)}),
        "authenticate": st.fixed_dictionaries({"methodId": text}),
        "_session/steering": st.fixed_dictionaries({"sessionId": session_id, "prompt": text}),
        "_agent-lsp/steer": st.fixed_dictionaries({"sessionId": session_id, "prompt": st.one_of(text, st.lists(block, max_size=2))}),
        "_agent-lsp/queue/remove": st.fixed_dictionaries({"sessionId": session_id, "messageId": text}),
        # the requests both faces answer from one table
        "_agent/session/export": st.fixed_dictionaries({"sessionId": session_id}),
        "_agent/review/list": st.fixed_dictionaries({}, optional={"sessionId": session_id, "uri": uri}),
        "_agent/review/resolve": st.fixed_dictionaries(
            {"sessionId": session_id, "action": st.one_of(st.sampled_from(["keep", "undo"]), text)},
            optional={"hunkId": text, "uri": uri, "all": st.booleans()}),
        "_nope/x": st.fixed_dictionaries({}, optional={"sessionId": session_id}),
    }

    @st.composite
    def request(draw) -> tuple[Any, str | int, bool]:
        method = draw(st.sampled_from(sorted(methods)))
        params = draw(_mutated(methods[method]))
        if method == "session/load" and isinstance(params, dict):
            params.update(cwd=ws, mcpServers=[])
        return {"jsonrpc": "2.0", "method": method, "params": params}, "ok", True

    return st.one_of(request(), request(), request(), request(), _line_fault(), _envelope_fault())
