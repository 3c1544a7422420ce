"""MCP prompts as commands the user runs: `agent/mcp/prompts` lists the ready
servers' prompts, `agent/mcp/prompt/run` fills one in and its messages become
the user's followup (the LSP layer queues it, like a skill).

A prompt's messages are turned into text: text stays text, an embedded text
resource becomes its text, anything else (images, audio, links) a line saying
what it was; an assistant message is marked as such, so the model can tell
the example answer of a prompt from the user's words.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_lsp.mcp.manager import McpManager

LIST_TIMEOUT_S = 10.0  # one server's prompts/list; a slow server must not hold up the others


class PromptProblem(ValueError):
    """The prompt cannot be run as asked (unknown server or prompt, missing argument)."""


async def list_prompts(manager: McpManager) -> list[dict[str, Any]]:
    """`{server, name, description?, arguments: [{name, description?, required}]}` of every ready server."""
    manager.start()
    await manager.wait_for_first_step()
    connections = [c for c in manager.connections.values() if c.has_prompts]
    listed = await asyncio.gather(*(c.list_prompts(timeout_s=LIST_TIMEOUT_S) for c in connections), return_exceptions=True)
    prompts: list[dict[str, Any]] = []
    for connection, found in zip(connections, listed):
        if isinstance(found, BaseException):
            continue  # that server's prompts are missing from the list; the others are there
        prompts.extend(_describe(connection.name, prompt) for prompt in found)
    return prompts


async def prompt_text(manager: McpManager, server: str, name: str, arguments: dict[str, str] | None) -> str:
    """The prompt filled in with `arguments`, as the text of a user message."""
    manager.start()
    await manager.wait_for_first_step()
    connection = manager.connections.get(server)
    if connection is None or not connection.has_prompts:
        ready = ", ".join(c.name for c in manager.connections.values() if c.has_prompts) or "none"
        raise PromptProblem(f"server: no ready MCP server named {server!r} with prompts (servers with prompts: {ready})")
    prompts = {p.name: p for p in await connection.list_prompts(timeout_s=LIST_TIMEOUT_S)}
    prompt = prompts.get(name)
    if prompt is None:
        raise PromptProblem(f"name: MCP server {server!r} has no prompt {name!r} (prompts: {', '.join(prompts) or 'none'})")
    given = dict(arguments or {})
    missing = [a.name for a in prompt.arguments or () if a.required and not given.get(a.name)]
    if missing:
        raise PromptProblem(f"arguments: prompt {server}:{name} needs {', '.join(missing)}")
    result = await connection.get_prompt(name, given, timeout_s=manager.tool_timeout_s)
    parts = [_message_text(message) for message in result.messages]
    return "\n\n".join(part for part in parts if part) or f"(the prompt {server}:{name} has no messages)"


def _describe(server: str, prompt: Any) -> dict[str, Any]:
    return {
        "server": server,
        "name": prompt.name,
        "description": prompt.description or prompt.title,
        "arguments": [
            {"name": a.name, "description": a.description, "required": bool(a.required)} for a in prompt.arguments or ()
        ],
    }


def _message_text(message: Any) -> str:
    content = message.content
    kind = getattr(content, "type", None)
    if kind == "text":
        text = content.text
    elif kind == "resource" and getattr(content.resource, "text", None) is not None:
        text = content.resource.text
    elif kind == "resource_link":
        text = f"[resource link: {content.title or content.name} <{content.uri}>]"
    else:
        text = f"[{kind or 'content'} {getattr(content, 'mime_type', '') or ''}]".replace(" ]", "]")
    return f"(assistant) {text}" if message.role == "assistant" else text
