"""Ask a local model server how large its context window is.

A model name such as `qwen2.5-coder:14b` says nothing about the context the
server runs it with, and without a window compaction cannot start before the
server rejects a prompt. The OpenAI-compatible servers people run locally say
it, each in its own place:

- vLLM: `GET <base>/models`, the model's `max_model_len`;
- llama.cpp's server: `GET <root>/props`, `default_generation_settings.n_ctx`
  (the context it was started with, `-c`);
- Ollama: `POST <root>/api/show {"model"}`, `num_ctx` in `parameters` when
  the model sets one, else `model_info["<arch>.context_length"]`;
- LM Studio: `GET <root>/api/v0/models/<model>`, `loaded_context_length`
  (else `max_context_length`).

`<root>` is the base URL without its trailing `/v1`. Each probe has a short
timeout and any failure just means "not this kind of server": discovery never
fails a request, it only fills in what was not configured.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Awaitable, Callable
from urllib.parse import quote

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 2.0


def _root(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _get_json(client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str],
                    body: Any = None) -> Any:
    import httpx

    try:
        response = await client.request(method, url, headers=headers, json=body, timeout=PROBE_TIMEOUT_S)
        if response.status_code != 200:
            return None
        return response.json()
    except (httpx.HTTPError, ValueError):
        return None


async def _vllm(client: httpx.AsyncClient, base_url: str, model: str, headers: dict[str, str]) -> int | None:
    listing = await _get_json(client, "GET", base_url.rstrip("/") + "/models", headers)
    entries = listing.get("data") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _positive_int(entry.get("max_model_len"))
    return None


async def _llama_cpp(client: httpx.AsyncClient, base_url: str, model: str, headers: dict[str, str]) -> int | None:
    props = await _get_json(client, "GET", _root(base_url) + "/props", headers)
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    return _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else _positive_int(props.get("n_ctx"))


async def _ollama(client: httpx.AsyncClient, base_url: str, model: str, headers: dict[str, str]) -> int | None:
    shown = await _get_json(client, "POST", _root(base_url) + "/api/show", headers, {"model": model})
    if not isinstance(shown, dict):
        return None
    match = re.search(r"^num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.MULTILINE)
    if match:
        return _positive_int(int(match.group(1)))
    info = shown.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length"):
                return _positive_int(value)
    return None


async def _lm_studio(client: httpx.AsyncClient, base_url: str, model: str, headers: dict[str, str]) -> int | None:
    entry = await _get_json(client, "GET", _root(base_url) + "/api/v0/models/" + quote(model, safe=""), headers)
    if not isinstance(entry, dict):
        return None
    return _positive_int(entry.get("loaded_context_length")) or _positive_int(entry.get("max_context_length"))


Probe = Callable[["httpx.AsyncClient", str, str, dict[str, str]], Awaitable["int | None"]]
PROBES: tuple[tuple[str, Probe], ...] = (
    ("vLLM /v1/models", _vllm),
    ("llama.cpp /props", _llama_cpp),
    ("Ollama /api/show", _ollama),
    ("LM Studio /api/v0/models", _lm_studio),
)


async def discover_context_window(client: httpx.AsyncClient, base_url: str, model: str,
                                  headers: dict[str, str]) -> int | None:
    """The context window the server at `base_url` runs `model` with, or None
    when it does not say."""
    for name, probe in PROBES:
        window = await probe(client, base_url, model, headers)
        if window:
            log.info("context window of %s at %s: %d tokens (from %s)", model, base_url, window, name)
            return window
    log.info("the server at %s does not say the context window of %s; set model.contextWindow", base_url, model)
    return None
