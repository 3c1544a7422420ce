"""A base URL that points at something other than a model API, said in one line.

A web page or web app at the base URL answers a model request with HTML (an
error page with 404, 405 or 501, or its own page with 200); a base URL without
`/v1` reaches the right server at a path it does not have (404 "Invalid URL"
from OpenAI, "404 page not found" from Ollama). Retrying cannot help, and the
page itself or "model not found" would send the user the wrong way: the
failure names the URL, what answered, and where the base URL comes from.
"""

from __future__ import annotations

import re
from typing import Mapping

from .types import NETWORK, LlmFailure

# Statuses the same request will get again: the path or the method is not there.
_NOT_THERE = frozenset({404, 405, 501})
_MODEL_WORDS = re.compile(r"\bmodel", re.IGNORECASE)


def _api(url: str) -> str:
    return "an Anthropic Messages API" if url.rstrip("/").endswith("/messages") else "an OpenAI-compatible"


def _failure(message: str, status: int, provider: str, model: str, hint: str) -> LlmFailure:
    failure: LlmFailure = {"code": NETWORK, "message": message + (f" ({hint})" if hint else ""),
                           "provider": provider, "model": model, "retryable": False}
    if status:
        failure["status"] = status
    return failure


def html_answer(status: int, headers: Mapping[str, str], *, url: str, provider: str, model: str,
                hint: str = "") -> LlmFailure | None:
    """An HTML page in answer to a model request: not a model API endpoint."""
    if not headers.get("content-type", "").lower().startswith(("text/html", "application/xhtml")):
        return None
    return _failure(f"{url} answered with an HTML page (HTTP {status}): not {_api(url)} endpoint",
                    status, provider, model, hint)


def path_not_there(failure: LlmFailure, body_message: str, *, url: str, hint: str = "") -> LlmFailure | None:
    """A 404/405/501 that is about the URL, not the model (its message does not
    mention a model): the base URL is wrong, most often a missing `/v1`."""
    status = failure.get("status", 0)
    if status not in _NOT_THERE or _MODEL_WORDS.search(body_message):
        return None
    question = "does the base URL end in /v1?" if "OpenAI" in _api(url) else "is the base URL right?"
    said = f": {body_message.strip()[:200]}" if body_message.strip() else ""
    return _failure(f"{url} answered HTTP {status}{said}; {question}", status,
                    failure.get("provider", ""), failure.get("model", ""), hint)


__all__ = ["html_answer", "path_not_there"]
