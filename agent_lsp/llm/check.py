"""One tiny real request to the configured model: does its endpoint answer, and how fast.

The same provider code a turn uses (so the same failures, with the endpoint
URL and the setting to change, `agent_lsp.llm.endpoint`), asked for one
token of an answer to "ping"; the first streamed chunk is enough: the
endpoint took the key and the model name and streams. A listing such as
`GET /v1/models` would not tell as much (many local servers list models they
cannot load, some do not list at all).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from typing import Any

from .factory import ResolvedModel
from .types import TIMEOUT, LlmError, ModelRequest

CHECK_TIMEOUT_S = 30.0
_PING = ({"role": "user", "id": "msg_check", "source": "user", "content": [{"type": "text", "text": "ping"}]},)


async def check_model(resolved: ResolvedModel, *, timeout_s: float = CHECK_TIMEOUT_S) -> dict[str, Any]:
    """{ok, provider, model, url?, description, latencyMs? | error}; the provider is closed after."""
    provider = resolved.provider
    endpoint = getattr(provider, "endpoint", None)
    result: dict[str, Any] = {"provider": resolved.provider_name, "model": resolved.model,
                              "url": endpoint.url if endpoint else None, "description": resolved.description}
    request = ModelRequest(provider=resolved.provider_name, model=resolved.model,
                           system="Answer with one word.", messages=_PING, max_tokens=1)
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s), aclosing(provider.stream(request)) as chunks:
            async for chunk in chunks:
                failure = chunk.get("failure") if chunk.get("type") == "finish" else None
                if failure:
                    return {**result, "ok": False, "error": failure}
                break
        return {**result, "ok": True, "latencyMs": int((time.monotonic() - started) * 1000)}
    except LlmError as error:
        return {**result, "ok": False, "error": error.failure}
    except TimeoutError:
        failure = {"code": TIMEOUT, "message": f"no answer within {timeout_s:g} s", "url": result["url"]}
        return {**result, "ok": False, "error": failure}
    finally:
        for used in (resolved, resolved.fallback):
            close = getattr(used.provider, "aclose", None) if used else None
            if close is not None:
                await close()


__all__ = ["check_model"]
