"""A user's message as the service takes it: content and context items, and the
`@server:uri` attachments added to its context.

Content is plain text or content blocks (`llm/types.py`), context items are
the plain objects of the wire (`kind`, `uri`, `range`, `text`, ...), stored
verbatim with the message. A mention `@server:uri` in the text attaches that
MCP server's resource as one more item (`agent_lsp.mcp.attachments`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_lsp.workspace.host import WorkspaceHost

# The fields of a context item in the order the wire model declares them, so an
# attachment is stored as an item the client sent would be.
CONTEXT_FIELDS = ("kind", "uri", "range", "text", "message", "server", "note")


@dataclass(frozen=True)
class Message:
    content: str | list[dict[str, Any]]
    context: list[dict[str, Any]] | None = None
    # Where `@server:uri` is looked for, when not in all of the text: the user's own
    # words of a text that also holds the files they attached (ACP's embedded resources).
    typed: str | None = None
    # What clients show instead of the content, when the content is for the model
    # (a skill's instructions): {kind, text}, the user message's `note`.
    note: dict[str, str] | None = None

    @property
    def text(self) -> str:
        """The text of the message: its text blocks, one a line."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(block.get("text") or "" for block in self.content if block.get("type") == "text")


async def with_attachments(host: WorkspaceHost, message: Message) -> Message:
    """The message with one `mcp-resource` context item per `@server:uri` in its text
    (the reads are waited for; a mention that cannot be read gives an item with a `note`)."""
    from agent_lsp.mcp.attachments import attachments, mentions  # with the MCP machinery, not at start

    typed = message.text if message.typed is None else message.typed
    if not mentions(typed):
        return message
    found = [_ordered(item) for item in await attachments(host.mcp_manager(), typed)]
    return replace(message, context=[*(message.context or []), *found])


def _ordered(item: dict[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in CONTEXT_FIELDS if item.get(name) is not None}
