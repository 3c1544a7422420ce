"""`@server:uri` in a followup's text: the user attaches an MCP server's resource.

The syntax: `@`, the server's name as configured, `:`, and the resource's URI
with its scheme (`@docs:docs://readme`, `@github:repo://owner/name/README.md`).
The mention starts the text or follows whitespace or an opening bracket or
quote (so an e-mail address is not one) and runs to the next whitespace; a trailing `.`, `,`, `;`, `:`, `!`,
`?` or closing bracket or quote is punctuation of the sentence, not of the URI.

Each mention becomes a context item of the message, `{kind: "mcp-resource",
server, uri, text}`, with the resource's text capped like tool output. When
the server is unknown, not ready, or the read fails, the item has no text and
a `note` saying why: the message still goes, and the user sees what was
not attached.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from agent_lsp.mcp.failure_text import error_text
from agent_lsp.mcp.manager import McpManager
from agent_lsp.mcp.resources import resource_blocks
from agent_lsp.mcp.tool import cap_blocks

MENTION = re.compile(r"(?<![^\s(\[{'\"])@(?P<server>[A-Za-z0-9_.-]{1,48}):(?P<uri>[A-Za-z][A-Za-z0-9+.-]*:\S+)")
TRAILING = ".,;:!?)]}>'\""
READ_TIMEOUT_S = 30.0  # the followup's answer waits for the reads


def mentions(text: str) -> list[tuple[str, str]]:
    """The (server, uri) pairs mentioned in `text`, in order, each once."""
    found = [(m["server"], m["uri"].rstrip(TRAILING)) for m in MENTION.finditer(text)]
    return list(dict.fromkeys(found))


async def attachments(manager: McpManager, text: str) -> list[dict[str, Any]]:
    """A context item per mention in `text` (none: no mention, nothing waited for)."""
    wanted = mentions(text)
    if not wanted:
        return []
    if any(server in manager.connections for server, _ in wanted):
        manager.start()
        await manager.wait_for_first_step()
    return list(await asyncio.gather(*(_attach(manager, server, uri) for server, uri in wanted)))


async def _attach(manager: McpManager, server: str, uri: str) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": "mcp-resource", "server": server, "uri": uri}
    connection = manager.connections.get(server)
    if connection is None:
        known = ", ".join(manager.connections) or "none"
        return {**item, "note": f"not attached: no MCP server named '{server}' in this workspace (servers: {known})"}
    try:
        result = await connection.read_resource(uri, timeout_s=READ_TIMEOUT_S)
    except TimeoutError:
        return {**item, "note": f"not attached: MCP server '{server}' did not answer within {READ_TIMEOUT_S:g} s"}
    except Exception as error:
        return {**item, "note": f"not attached: {error_text(error)}"}
    blocks, truncated = cap_blocks(resource_blocks(result), manager.max_output_chars)
    item["text"] = "\n".join(block["text"] for block in blocks)
    if truncated:
        item["note"] = f"cut at {manager.max_output_chars} characters"
    return item
