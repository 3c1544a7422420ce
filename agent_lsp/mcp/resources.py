"""Two tools over the MCP servers' resources: `mcp_list_resources` and
`mcp_read_resource`. They are offered while at least one ready server
declares the resources capability. Reading a resource is a read (kind
"read": allowed unless a rule says otherwise), not a command.
"""

from __future__ import annotations

import base64
from typing import Any, Callable

from pydantic import BaseModel, Field

from agent_lsp.agent.ports import Editor, PermissionRequest, ToolContext, ToolOutput
from agent_lsp.mcp.connection import ServerConnection
from agent_lsp.mcp.failure_text import ServerUnavailable, error_text
from agent_lsp.mcp.tool import cap_blocks
from agent_lsp.tools.base import PermissionGate, ToolError, ToolInput, error_output, unless_aborted
from agent_lsp.visible import visible_name

LIST_TOOL = "mcp_list_resources"
READ_TOOL = "mcp_read_resource"


class ListArgs(ToolInput):
    server: str | None = Field(default=None, description="one MCP server's name; all servers when absent")


class ReadArgs(ToolInput):
    server: str = Field(description="the MCP server's name, as mcp_list_resources shows it")
    uri: str = Field(description="the resource's URI")


class _ResourceTool:
    def __init__(self, servers: Callable[[], dict[str, ServerConnection]], *, editor: Editor,
                 policy: PermissionGate | None, timeout_s: float, max_output_chars: int):
        self.servers = servers  # the connections of the workspace, now
        self.editor = editor
        self.policy = policy
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars

    def is_parallel(self, args: BaseModel) -> bool:
        return True

    def _with_resources(self, name: str | None) -> list[ServerConnection]:
        connections = self.servers()
        if name is not None:
            if name not in connections:
                raise ToolError(f"no MCP server named '{name}' (servers: {', '.join(connections) or 'none'})", "NOT_FOUND")
            return [connections[name]]
        return [c for c in connections.values() if c.has_resources]

    async def _authorize(self, ctx: ToolContext, title: str) -> None:
        if self.policy is None:
            return
        request = PermissionRequest(tool=self.name, title=title, kind="read", session_id=ctx.session_id)
        verdict = await unless_aborted(ctx, self.policy.authorize(self.editor, request), "The turn was cancelled.")
        if not verdict.allowed:
            raise ToolError(f"Permission denied: {title}. {verdict.reason}".strip(), "PERMISSION_DENIED")

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        try:
            return await self.execute(args, ctx)
        except ToolError as error:
            return error_output(error.message, error.code)
        except ServerUnavailable as error:
            return error_output(str(error), "MCP_SERVER_UNAVAILABLE")
        except TimeoutError:
            return error_output(f"the MCP server did not answer within {self.timeout_s:g} s", "TIMEOUT")
        except Exception as error:
            message = error_text(error)
            return error_output(f"the MCP server failed: {message}", "MCP_ERROR")

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError


class ListResourcesTool(_ResourceTool):
    name = LIST_TOOL
    description = "List the resources (documents, records, files) the MCP servers offer; read one with mcp_read_resource."
    input_model = ListArgs

    async def execute(self, args: ListArgs, ctx: ToolContext) -> ToolOutput:
        await self._authorize(ctx, f"List the resources of {'MCP server ' + repr(args.server) if args.server else 'the MCP servers'}")
        lines: list[str] = []
        for connection in self._with_resources(args.server):
            for resource in await connection.list_resources(timeout_s=self.timeout_s):
                kind = f" ({resource.mime_type})" if resource.mime_type else ""
                # one line each: a server's name or description cannot forge a line of the listing
                about = f": {_one_line(resource.description)}" if resource.description else ""
                lines.append(f"{connection.name}  {visible_name(str(resource.uri))}  "
                             f"{_one_line(resource.title or resource.name)}{kind}{about}")
        text = "\n".join(lines) if lines else "(no resources)"
        blocks, _ = cap_blocks([{"type": "text", "text": text}], self.max_output_chars)
        return ToolOutput(content=blocks, meta={"resources": len(lines)})


class ReadResourceTool(_ResourceTool):
    name = READ_TOOL
    description = "Read one resource of an MCP server by its URI (see mcp_list_resources)."
    input_model = ReadArgs

    async def execute(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        (connection,) = self._with_resources(args.server)
        await self._authorize(ctx, f"Read {args.uri} from MCP server '{args.server}'")
        result = await connection.read_resource(args.uri, timeout_s=self.timeout_s)
        blocks, truncated = cap_blocks(resource_blocks(result), self.max_output_chars)
        return ToolOutput(content=blocks, meta={"mcp": {"server": args.server, "uri": args.uri, "truncated": truncated}})


def resource_blocks(result: Any) -> list[dict[str, Any]]:
    """A `ReadResourceResult` as text blocks: text contents as they are, binary ones described."""
    blocks: list[dict[str, Any]] = []
    for content in result.contents:
        text = getattr(content, "text", None)
        if text is not None:
            blocks.append({"type": "text", "text": text})
        else:
            blob = getattr(content, "blob", "") or ""
            size = len(base64.b64decode(blob)) if blob else 0
            blocks.append({"type": "text", "text": f"[{content.uri}: {content.mime_type or 'binary'}, {size} bytes]"})
    return blocks or [{"type": "text", "text": "(empty)"}]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
