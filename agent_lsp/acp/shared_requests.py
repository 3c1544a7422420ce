"""The requests both faces answer the same way (`agent_lsp.service.requests`),
as ACP extension methods: `_agent/session/export` is the LSP face's
`agent/session/export`, `_agent/review/list` and `_agent/review/resolve` its
`agent/review/*`, with the same params, result and errors."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agent_lsp.acp.folders import invalid
from agent_lsp.service import AgentService
from agent_lsp.service.requests import SHARED_REQUESTS, InvalidParams, dump, validation_problem


async def answer(service: AgentService, method: str, params: Any) -> dict[str, Any]:
    request = SHARED_REQUESTS[method]
    try:
        parsed = request.params.model_validate(params if params is not None else {})
    except ValidationError as error:
        raise invalid(validation_problem(error)) from None
    try:
        return dump(await request.call(service, parsed))
    except InvalidParams as error:
        raise invalid(str(error)) from None
