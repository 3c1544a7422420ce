"""What both faces (LSP and ACP) say about a JSON-RPC message that is not one:
the checks of the envelope and of the text, and the wording of the answers,
so that the same bad input gets the same answer on either face.

A leaf: it imports nothing of ours, and no JSON-RPC library.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
INTERNAL_ERROR_MESSAGE = "internal error in the server (the server log has the details)"
# A prompt whose turn ended in a failure (the model's, a context window too small): not an
# internal error. The message is the failure's; data {failure: {code, message, ...}}.
TURN_FAILED = -32011
MAX_ERROR_MESSAGE = 1000  # a longer error message (it may quote a huge param) is cut short


def loads(body: bytes | str) -> Any:
    """A message body as JSON, as both faces read it: strict JSON, so `NaN`,
    `Infinity` and `-Infinity` (which Python's parser accepts) are refused.
    Raises ValueError (UnicodeDecodeError included) or RecursionError; the
    answer's message is `parse_problem(error)`."""
    return json.loads(body, parse_constant=_not_json)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_problem(error: Exception) -> str:
    """The answer's message for a body that `json.loads` refused with `error`
    (a ValueError, or RecursionError for one nested too deeply)."""
    if isinstance(error, RecursionError):
        return "parse error: not JSON (nested too deeply)"
    return f"parse error: not JSON ({brief(error)})"


def envelope_problem(data: Any) -> str | None:
    """What makes `data` (parsed JSON) not a JSON-RPC 2.0 request, notification
    or response, or None. The caller answers `invalid request: <problem>`."""
    if not isinstance(data, dict):
        return f"expected a JSON object, got {json_type(data)}"
    if "id" in data and not valid_id(data["id"]):
        return f"id must be an integer or a string, got {json_type(data['id'])}"
    if data.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    method = data.get("method")
    if "method" in data and not isinstance(method, str):
        return f"method must be a string, got {json_type(method)}"
    if method is None:
        if "result" in data or "error" in data:
            return None  # a response
        return "a request needs a method" if "id" in data else "a notification needs a method"
    return None


def answer_id(data: Any) -> Any:
    """The id to answer a refused message with: its own when it can be echoed, else None."""
    return data.get("id") if isinstance(data, dict) and valid_id(data.get("id")) else None


def valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def brief(value: object, limit: int = 120) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def shown(text: str, limit: int = 80) -> str:
    """A client's string as an error message quotes it: cut short if long."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


def invalid_text(value: Any, path: str = "") -> str | None:
    """The path (`a.b.0`) of the first string in `value` that cannot be encoded
    as UTF-8 (JSON may escape one half of a UTF-16 pair), or None."""
    if isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        inner = f"{path}.{key}" if path else str(key)
        where = invalid_text(key, inner) if isinstance(key, str) else None
        if where is None:
            where = invalid_text(item, inner)
        if where is not None:
            return where.encode("utf-8", "backslashreplace").decode()
    return None


def not_unicode(where: str) -> str:
    """The message for params holding text `invalid_text` found at `where`."""
    return f"{brief(where) or 'params'}: not valid Unicode (an unpaired surrogate)"
