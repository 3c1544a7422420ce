"""The models an endpoint says it serves, for the model pickers.

OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, most
routers) answer `GET <base>/models` with `{"data": [{"id": ...}, ...]}`;
Anthropic answers `GET <root>/v1/models` with the same shape (its `limit`
goes up to 1000, one page covers every model it has). A listing that fails
raises `ModelListError` with a readable reason: the caller then offers only
the configured models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

if TYPE_CHECKING:
    import httpx

LIST_TIMEOUT_S = 5.0
SHOWN_MODELS = 20  # at most this many names in a "model not found" message


class ModelListError(Exception):
    pass


async def list_model_ids(client: httpx.AsyncClient, url: str, headers: Mapping[str, str],
                         params: Mapping[str, str] | None = None) -> list[str]:
    """The `id` of every entry of the listing at `url`, in the server's order."""
    import httpx

    wanted = {k: v for k, v in headers.items() if k.lower() != "accept"}
    try:
        response = await client.get(url, headers={**wanted, "Accept": "application/json"}, params=params,
                                    timeout=LIST_TIMEOUT_S)
    except httpx.HTTPError as error:
        raise ModelListError(f"{url} did not answer ({type(error).__name__})") from None
    if response.status_code != 200:
        raise ModelListError(f"{url} answered HTTP {response.status_code}")
    try:
        listing: Any = response.json()
    except ValueError:
        raise ModelListError(f"{url} did not answer JSON") from None
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        raise ModelListError(f"{url} answered without a model list")
    return [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]]


async def name_listed_models(failure: dict[str, Any], list_models: Callable[[], Awaitable[list[str]]]) -> None:
    """A model the endpoint does not have: add the models it lists to the
    failure's message, so the user can pick one (a listing that fails adds nothing)."""
    try:
        listed = await list_models()
    except ModelListError:
        return
    if not listed:
        failure["message"] = f"{failure.get('message', '')}; the server lists no models"
        return
    shown = ", ".join(listed[:SHOWN_MODELS]) + (f" and {len(listed) - SHOWN_MODELS} more" if len(listed) > SHOWN_MODELS else "")
    failure["message"] = f"{failure.get('message', '')}; the server has: {shown}"
