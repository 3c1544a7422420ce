"""An MCP server's tool, seen by the agent as one more tool (the `Tool` port).

- Name: `mcp__<server>__<tool>` (characters outside `[A-Za-z0-9_-]` become
  `_`, at most 64 characters: what the model APIs accept).
- Description and input schema: the server's, passed through; the arguments
  the model sends are validated against the schema (JSON Schema, by the
  `jsonschema` library the SDK brings) before the call, and a mismatch is an
  INVALID_ARGUMENTS result the model can correct.
- Permission: the workspace's policy, like a built-in tool: a call asks by
  default (kind "command": it runs code we did not write); rules can name the
  tool or the whole server (`mcp__<server>__*`); "always" is remembered.
- Cancellation: a cancelled turn cancels the call (the SDK sends
  `notifications/cancelled`) and drops the result; a call that takes longer
  than its timeout is cancelled the same way and reported as TIMEOUT.
- Result: text blocks stay text, images and resource links are kept as blocks
  (with a line of text saying what they are, for models that read only text);
  beyond `max_output_chars` the text is cut with a marker.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any, ClassVar

from pydantic import BaseModel, model_validator

from agent_lsp.agent.ports import Editor, PermissionRequest, ToolContext, ToolOutput
from agent_lsp.mcp.connection import ServerConnection
from agent_lsp.mcp.failure_text import ServerUnavailable, error_text
from agent_lsp.mcp.flood import throttled_progress
from agent_lsp.tools.base import PermissionGate, ToolError, error_output, unless_aborted

NAME_LIMIT = 64
DETAIL_LIMIT = 2_000  # characters of the arguments shown in the permission question
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"[:NAME_LIMIT]


def server_prefix(server: str) -> str:
    return f"mcp__{_UNSAFE.sub('_', server)}__"


class McpArguments(BaseModel):
    """The arguments of one MCP tool: any JSON object its schema accepts."""

    values: dict[str, Any]
    schema_: ClassVar[dict[str, Any]] = {"type": "object"}
    validator_: ClassVar[Any] = None

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return cls.schema_

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"the arguments must be a JSON object, got {type(data).__name__}")
        if cls.validator_ is not None:
            errors = sorted(cls.validator_.iter_errors(data), key=lambda e: list(e.absolute_path))
            if errors:
                raise ValueError("; ".join(_schema_error(e) for e in errors[:5]))
        return {"values": data}


def _schema_error(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def arguments_model(name: str, schema: dict[str, Any]) -> type[McpArguments]:
    import jsonschema

    schema = dict(schema or {})
    schema.setdefault("type", "object")
    try:
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator_class.check_schema(schema)
        validator = validator_class(schema)
    except jsonschema.SchemaError:
        validator = None  # the server's schema is itself broken: the server checks the arguments
    return type(f"Args_{name}", (McpArguments,), {"schema_": schema, "validator_": validator})


class McpTool:
    """Implements the `Tool` port for one tool of one connected server."""

    def __init__(
        self,
        connection: ServerConnection,
        definition: Any,  # mcp_types.Tool
        *,
        editor: Editor,
        policy: PermissionGate | None,
        timeout_s: float,
        max_output_chars: int,
    ):
        self.connection = connection
        self.remote_name = definition.name
        self.name = tool_name(connection.name, definition.name)
        title = definition.title or (definition.annotations.title if definition.annotations else None)
        description = definition.description or title or definition.name
        self.description = f"{description}\n\n(MCP server '{connection.name}')"
        self.input_model = arguments_model(self.name, definition.input_schema)
        self.read_only = bool(definition.annotations and definition.annotations.read_only_hint)
        self.editor = editor
        self.policy = policy
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars

    def is_parallel(self, args: BaseModel) -> bool:
        return self.read_only

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        arguments = args.values if isinstance(args, McpArguments) else args.model_dump()
        try:
            await self._authorize(ctx, arguments)
        except ToolError as error:
            return error_output(error.message, error.code)
        server = self.connection.name
        meta = {"mcp": {"server": server, "tool": self.remote_name}}
        call = asyncio.ensure_future(
            self.connection.call_tool(self.remote_name, arguments, timeout_s=self.timeout_s, on_progress=_progress(ctx))
        )
        self.connection.calling_sessions.append(ctx.session_id)  # a question the server asks meanwhile is theirs
        try:
            result = await unless_aborted(ctx, call, f"The turn was cancelled; the MCP tool {self.remote_name} was stopped.")
        except ToolError as error:  # aborted: the call was cancelled, the server told
            return error_output(error.message, error.code, meta)
        except asyncio.TimeoutError:
            return error_output(
                f"The MCP tool {self.remote_name} of server '{server}' did not answer within {self.timeout_s:g} s; it was cancelled.",
                "TIMEOUT",
                meta,
            )
        except ServerUnavailable as error:
            return error_output(str(error), "MCP_SERVER_UNAVAILABLE", meta)
        except Exception as error:
            message = error_text(error)
            return error_output(f"MCP server '{server}' failed the call to {self.remote_name}: {message}", "MCP_ERROR", meta)
        finally:
            self.connection.calling_sessions.remove(ctx.session_id)
        content, truncated = convert_content(result, self.max_output_chars)
        if truncated:
            meta["mcp"]["truncated"] = True
        if result.is_error:
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            return ToolOutput(content=content, is_error=True, meta=meta,
                              error={"name": "McpToolError", "code": "MCP_TOOL_ERROR", "message": text[:500]})
        return ToolOutput(content=content, meta=meta)

    async def _authorize(self, ctx: ToolContext, arguments: dict[str, Any]) -> None:
        if self.policy is None:
            return
        shown = json.dumps(arguments, ensure_ascii=False)
        if len(shown) > DETAIL_LIMIT:
            shown = shown[:DETAIL_LIMIT] + " …"
        request = PermissionRequest(
            tool=self.name,
            title=f"Run the MCP tool {self.remote_name} of server '{self.connection.name}'",
            kind="command",
            detail=f"arguments: {shown}",
            session_id=ctx.session_id,
        )
        verdict = await unless_aborted(
            ctx,
            self.policy.authorize(self.editor, request),
            f"The turn was cancelled while waiting for permission ({request.title}); nothing was done.",
        )
        if not verdict.allowed:
            raise ToolError(f"Permission denied: {request.title}. {verdict.reason}".strip(), "PERMISSION_DENIED")


def _progress(ctx: ToolContext):
    @throttled_progress  # a server may report thousands of times a second (flood.py)
    async def report(progress: float, total: float | None, message: str | None) -> None:
        data: dict[str, Any] = {"progress": progress}
        if total is not None:
            data["total"] = total
        if message:
            data["message"] = message
        ctx.progress(data)

    return report


def convert_content(result: Any, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """The result's content as tool-result blocks, the text capped at `limit` characters."""
    blocks: list[dict[str, Any]] = []
    for item in result.content or ():
        kind = getattr(item, "type", None)
        if kind == "text":
            blocks.append({"type": "text", "text": item.text})
        elif kind in ("image", "audio"):
            size = len(item.data) * 3 // 4
            blocks.append({"type": "text", "text": f"[{kind} {item.mime_type}, {_size(size)}]"})
            blocks.append({"type": kind, "mimeType": item.mime_type, "data": item.data})
        elif kind == "resource_link":
            label = item.title or item.name
            blocks.append({"type": "text", "text": f"[resource link: {label} <{item.uri}>]"})
            link = {"type": "resource_link", "uri": str(item.uri), "name": item.name}
            if item.mime_type:
                link["mimeType"] = item.mime_type
            if item.description:
                link["description"] = item.description
            blocks.append(link)
        elif kind == "resource":
            resource = item.resource
            text = getattr(resource, "text", None)
            if text is None:
                blob = getattr(resource, "blob", "") or ""
                text = f"[embedded resource {resource.uri}: {resource.mime_type or 'binary'}, {_size(len(base64.b64decode(blob + '==', validate=False)) if blob else 0)}]"
            blocks.append({"type": "text", "text": text})
            blocks.append({"type": "resource", "uri": str(resource.uri), **({"mimeType": resource.mime_type} if resource.mime_type else {})})
        else:
            blocks.append({"type": "text", "text": json.dumps(item.model_dump(mode="json", by_alias=True, exclude_none=True))})
    if not any(b["type"] == "text" for b in blocks) and result.structured_content is not None:
        blocks.append({"type": "text", "text": json.dumps(result.structured_content, ensure_ascii=False)})
    if not blocks:
        blocks.append({"type": "text", "text": "(the tool returned no content)"})
    return cap_blocks(blocks, limit)


def cap_blocks(blocks: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], bool]:
    total = sum(len(b.get("text", "")) + len(b.get("data", "")) for b in blocks)
    if total <= limit:
        return blocks, False
    out: list[dict[str, Any]] = []
    room = limit
    dropped = 0
    for block in blocks:
        size = len(block.get("text", "")) + len(block.get("data", ""))
        if size <= room:
            out.append(block)
            room -= size
        elif block["type"] == "text" and room > 0:
            out.append({"type": "text", "text": block["text"][:room]})
            dropped += size - room
            room = 0
        else:
            dropped += size
    out.append({"type": "text", "text": f"\n[… {dropped} characters of output not shown …]"})
    return out, True


def _size(n: int) -> str:
    return f"{n} bytes" if n < 10_000 else f"{n // 1000} KB"
