"""The MCP servers of one workspace: trust, starting, stopping, and their tools in the registry.

`McpManager` is made by the workspace host with the servers of its folder
(agent_lsp.mcp.config). `start()` (called when the first session of the
folder is built) asks once about servers from the project's `.mcp.json` and
starts every server that may run; each server's tools enter the host's
`ToolRegistry` as soon as it is ready and follow its tool-list changes, so
the model sees a change at its next step. `stop()` stops them all (with the
host: folder removed, settings changed, server shut down).

Trust for a project server is a permission question through the workspace's
policy (tool `mcp_server`, the server's command line or URL as written in the
file): "always" is remembered for the workspace like any grant, so the next
start does not ask; a changed command asks again.

An HTTP server without configured credentials signs in with OAuth when it
asks (oauth.py); its tokens live in `token_dir` (none: no OAuth). The
sign-in page opens through the editor's `open_url`. `authorize(name)` asks
again what a server waits for: the trust question, or a new sign-in;
`sign_out(name)` forgets a server's tokens.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Iterable

from agent_lsp.agent.ports import Editor, PermissionRequest, one_line
from agent_lsp.mcp.config import PROJECT_FILE, ServerConfig, ServerProblem
from agent_lsp.mcp.connection import UNSETTLED, ServerConnection
from agent_lsp.mcp.elicitation import Answer, Question
from agent_lsp.mcp.oauth import SIGN_IN_TIMEOUT_S
from agent_lsp.mcp.resources import LIST_TOOL, READ_TOOL, ListResourcesTool, ReadResourceTool
from agent_lsp.mcp.tool import McpTool, server_prefix
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools.base import PermissionGate

log = logging.getLogger(__name__)

TRUST_TOOL = "mcp_server"  # the tool name of the trust question in permission rules


class McpManager:
    def __init__(
        self,
        servers: Iterable[ServerConfig],
        problems: Iterable[ServerProblem] = (),
        *,
        root: Path,
        editor: Editor,
        policy: PermissionGate | None,
        registry: Any = None,  # agent_lsp.agent.ToolRegistry; set_registry() when built later
        tool_timeout_s: float = 120.0,
        connect_timeout_s: float = 30.0,
        max_output_chars: int = 50_000,
        first_step_wait_s: float = 10.0,
        elicitation_timeout_s: float = 300.0,
        client_version: str = "0",
        token_dir: Path | None = None,  # OAuth tokens of HTTP servers (token_store.py); None: no OAuth
        sandbox: SandboxPolicy | None = None,  # where stdio servers run (mcp/sandboxed.py); None: as the user
    ):
        self.root = root
        self.sandbox = sandbox
        self.token_dir = token_dir
        self.editor = editor
        self.policy = policy
        self.registry = registry
        self.tool_timeout_s = tool_timeout_s
        self.max_output_chars = max_output_chars
        self.first_step_wait_s = first_step_wait_s
        self.elicitation_timeout_s = elicitation_timeout_s
        self.problems = list(problems)
        self.connect_timeout_s = connect_timeout_s
        self.client_version = client_version
        self.connections: dict[str, ServerConnection] = {config.name: self._connection(config) for config in servers}
        self._started = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping: set[asyncio.Task[Any]] = set()  # servers a reload replaced, being stopped
        for problem in self.problems:
            log.warning("%s", problem)

    # ------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the servers (once): the user's at once, the project's once trusted."""
        if self._started:
            return
        self._started = True
        for connection in self.connections.values():
            self._start_one(connection)

    def _start_one(self, connection: ServerConnection) -> None:
        if connection.config.is_project:
            self._spawn(self._start_if_trusted(connection))
        else:
            connection.start()

    def _connection(self, config: ServerConfig) -> ServerConnection:
        return ServerConnection(config, root=self.root, connect_timeout_s=self.connect_timeout_s,
                                on_change=self._changed, on_question=self._ask_user,
                                client_version=self.client_version, token_dir=self.token_dir, sandbox=self.sandbox,
                                open_url=getattr(self.editor, "open_url", None))

    def reload(self, servers: Iterable[ServerConfig], problems: Iterable[ServerProblem] = ()) -> list[str]:
        """Take the servers as configured now (`.mcp.json` changed): a server whose
        entry is gone or changed is stopped, a new or changed one starts (a project
        one once trusted), the others keep running. Returns the names stopped or started."""
        wanted = {config.name: config for config in servers}
        touched = []
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.config:
                del self.connections[name]
                touched.append(name)
                if self.registry is not None:
                    self._sync_tools(connection, [])
                task = asyncio.ensure_future(connection.stop())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)
        for name, config in wanted.items():
            if name not in self.connections:
                connection = self.connections[name] = self._connection(config)
                if name not in touched:
                    touched.append(name)
                if self._started:
                    self._start_one(connection)
        self.problems = list(problems)
        for problem in self.problems:
            log.warning("%s", problem)
        if self.registry is not None:
            self._sync_resource_tools()
        return touched

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, *self._stopping, *(c.stop() for c in self.connections.values()),
                             return_exceptions=True)
        self._tasks.clear()
        if self.registry is not None:
            for connection in self.connections.values():
                self._sync_tools(connection, [])
            self._sync_resource_tools()

    def set_registry(self, registry: Any) -> None:
        self.registry = registry
        for connection in self.connections.values():
            self._changed(connection)

    async def wait_for_first_step(self) -> None:
        """Let trust questions be answered and servers finish starting (within
        `first_step_wait_s` in all), so the first request offers their tools."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.first_step_wait_s
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self.first_step_wait_s)
        starting = [c for c in self.connections.values() if c.state in UNSETTLED]
        if starting:
            left = max(0.0, deadline - loop.time())
            await asyncio.gather(*(c.wait_settled(left) for c in starting))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start_if_trusted(self, connection: ServerConnection) -> None:
        config = connection.config
        if self.policy is None:
            connection.start()
            return
        connection.mark("needs-trust", f"asking whether to trust it ({PROJECT_FILE} of this workspace)")
        target = "command" if config.transport == "stdio" else "URL"
        request = PermissionRequest(
            tool=TRUST_TOOL,
            title=f"Start the MCP server '{config.name}' from {PROJECT_FILE} of {self.root.name}?",
            kind="command",
            detail=f"The workspace's {PROJECT_FILE} asks to run this {target}: {one_line(config.shown)}",
            command=f"{config.name}: {one_line(config.shown)}",
        )
        verdict = await self.policy.authorize(self.editor, request)
        if self.connections.get(config.name) is not connection:
            return  # a reload replaced it meanwhile
        if verdict.allowed:
            connection.start()
        else:
            connection.mark("denied", f"not trusted: {verdict.reason}".strip())

    # --------------------------------------------------------- authorization

    async def authorize(self, name: str) -> None:
        """Ask again what the server waits for: trust (a project server), or an
        OAuth sign-in (new tokens); a stopped server starts. Raises KeyError, ValueError."""
        connection = self.connections[name]
        if connection.sign_in is not None and connection.state not in ("needs-trust", "denied"):
            await connection.authorize()
        elif connection.config.is_project:
            if connection.state not in ("needs-trust", "denied"):
                raise ValueError(f"MCP server '{name}' is trusted already and does not sign in with OAuth")
            await self._start_if_trusted(connection)
        else:
            raise ValueError(f"MCP server '{name}' needs no authorization")
        await connection.wait_settled(SIGN_IN_TIMEOUT_S + self.connect_timeout_s)

    async def sign_out(self, name: str) -> bool:
        """Forget the server's OAuth tokens (it stops). Raises KeyError, ValueError."""
        return await self.connections[name].sign_out()

    # ------------------------------------------------------------- questions

    async def _ask_user(self, question: Question) -> Answer:
        """A server's question to the editor; no answer within the timeout is `cancel`."""
        elicit = getattr(self.editor, "elicit", None)
        if elicit is None:
            log.info("MCP server %s asked the user (%s); this editor cannot ask: declined", question.server, question.message)
            return Answer("decline")
        try:
            answer = await asyncio.wait_for(elicit(question), self.elicitation_timeout_s)
        except asyncio.TimeoutError:
            log.info("MCP server %s: the user did not answer within %g s: cancelled", question.server, self.elicitation_timeout_s)
            return Answer("cancel")
        if answer.reason:
            log.info("MCP server %s asked the user (%s): %s", question.server, question.message, answer.reason)
        return answer

    # ----------------------------------------------------------------- tools

    def _changed(self, connection: ServerConnection) -> None:
        if self.registry is None or self.connections.get(connection.name) is not connection:
            return  # (a server a reload replaced, stopping: its tools are gone already)
        definitions = connection.tools if connection.state == "ready" else []
        self._sync_tools(connection, definitions)
        self._sync_resource_tools()

    def _sync_tools(self, connection: ServerConnection, definitions: list[Any]) -> None:
        timeout = connection.config.tool_timeout_s or self.tool_timeout_s
        wanted = {}
        for definition in definitions:
            try:
                tool = McpTool(connection, definition, editor=self.editor, policy=self.policy,
                               timeout_s=timeout, max_output_chars=self.max_output_chars)
            except Exception as error:  # one odd tool definition must not hide the others
                log.warning("MCP server %s: tool %s skipped: %s", connection.name, getattr(definition, "name", "?"), error)
                continue
            wanted[tool.name] = tool
        prefix = server_prefix(connection.name)
        for name in self.registry.names():
            if name.startswith(prefix) and name not in wanted:
                self.registry.remove(name)
        for tool in wanted.values():
            self.registry.add(tool)

    def _sync_resource_tools(self) -> None:
        """mcp_list_resources and mcp_read_resource, while some ready server has resources."""
        if not any(c.has_resources for c in self.connections.values()):
            self.registry.remove(LIST_TOOL)
            self.registry.remove(READ_TOOL)
            return
        if LIST_TOOL in self.registry:
            return
        for tool_class in (ListResourcesTool, ReadResourceTool):
            self.registry.add(tool_class(lambda: self.connections, editor=self.editor, policy=self.policy,
                                         timeout_s=self.tool_timeout_s, max_output_chars=self.max_output_chars))

    # ---------------------------------------------------------------- status

    def status(self) -> list[dict[str, Any]]:
        """Every server of the workspace, bad entries included (see docs/protocol.md, agent/mcp/list)."""
        listed = [connection.status() for connection in self.connections.values()]
        for problem in self.problems:
            listed.append({
                "name": problem.name, "source": problem.source, "state": "failed",
                "reason": problem.reason, "toolCount": 0, "tools": [], "restarts": 0,
            })
        return listed
