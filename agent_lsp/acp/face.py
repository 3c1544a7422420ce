"""The ACP agent: ACP's methods over the workspace hosts, the same agents and store as LSP.

The `acp` library (agent-client-protocol) speaks the JSON-RPC and calls these
methods; each maps onto the workspace/agent API, and what the LSP face does
too (a prompt, a steer, a cancel, a queued prompt removed) is one call of the
application service (`agent_lsp.service`), with this face's folders and
sessions (acp/folders.py) as its SessionDirectory:

    initialize          the client's fs capabilities switch the editor to client files
    session/new         a session in the store of the client's cwd (one WorkspaceHost per folder)
    session/load        the session's log replayed as session/update, then followed live
    session/set_config_option   the model, switched as agent/session/setModel does (acp/models.py)
    session/list        the stored sessions of a folder (the LSP face's agent/session/list sees the same)
    session/prompt      a followup; answered when the turn that took it ends (acp/session.py)
    session/cancel      the running turn is cancelled, queued prompts dropped; answered `cancelled`
    _session/steering   a message for the running turn (the steering extension of the Claude and
                        Codex ACP adapters); `_agent-lsp/steer` is our older name for it
    _agent-lsp/queue/remove   a queued prompt taken out (the queue is sent as `_agent-lsp/queue`, acp/queue.py)

Slash commands (`available_commands_update`): /compact, /revert, /new (acp/slash_commands.py) and the MCP
servers' prompts as /server:prompt (acp/mcp_prompts.py).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SetSessionConfigOptionResponse,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from agent_lsp import __version__
from agent_lsp.acp.client_editor import AcpEditor
from agent_lsp.acp.client_mcp import ClientMcp, ClientServerError, client_servers
from agent_lsp.acp.damaged import replay_damaged
from agent_lsp.acp.folders import AcpFolders, in_use, invalid
from agent_lsp.acp.images import prompt_images
from agent_lsp.acp.prompt_blocks import prompt_text
from agent_lsp.acp.mcp_prompts import PromptCommand, run_prompt_command, session_prompt_commands
from agent_lsp.acp.models import MODEL_OPTION, ModelChoice, no_model_notice
from agent_lsp.acp.queue import REMOVE_METHOD
from agent_lsp.acp import shared_requests
from agent_lsp.acp.session import AcpSession, Notice
from agent_lsp.acp.slash_commands import COMMAND_NAMES, COMMANDS, run_slash_command
from agent_lsp.acp.terminal import run_in_terminal
from agent_lsp.acp.tool_calls import around_tool_hook
from agent_lsp.acp.updates import UpdateMapper
from agent_lsp.agent import Agent
from agent_lsp.config.layers import SettingsLayers
from agent_lsp.service import AgentService, ImageProblem, Message
from agent_lsp.service.requests import SHARED_REQUESTS
from agent_lsp.service.session_list import list_sessions
from agent_lsp.jsonrpc import TURN_FAILED, shown
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.event_log import UnreadableEventError
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.workspace.host import UnknownSession, WorkspaceHost
from agent_lsp.workspace.permissions import PERMISSION_MODES
from agent_lsp.workspace.session_models import ModelSwitchError

log = logging.getLogger(__name__)

STOP_REASONS = {"completed": "end_turn", "max-tokens": "max_tokens", "blocked": "refusal",
                "aborted": "cancelled", "interrupted": "cancelled"}
CANCEL_ANSWER_S = 0.08  # a cancelled prompt is answered by then even if its turn has not ended yet
# Extension methods are named here without the "_" they have on the wire.
STEERING_METHOD = "session/steering"  # as claude-agent-acp and codex-acp serve it, advertised in `_meta.steering`
STEER_METHOD = "agent-lsp/steer"  # our earlier name, kept: a steer, or a followup when idle

# The core's permission modes as ACP session modes.
MODES = [
    SessionMode(id="default", name="Default", description="Edits and commands under the permission rules"),
    SessionMode(id="plan", name="Plan", description="Reads and searches only; the agent writes a plan, edits and "
                                                    "commands are refused"),
]


class AcpAgent:
    def __init__(self, settings: SettingsLayers, env: Mapping[str, str] = os.environ, window: str | None = None):
        self.settings = settings
        self.env = env  # the client's environment (on the agent host, the connector's)
        self.window = window  # which connection of the agent host this is (None: the process serves one)
        self.folders = AcpFolders(self._build_host)  # one host per session cwd
        self.service = AgentService(self.folders)  # the operations both faces share
        self.sessions: dict[str, AcpSession] = {}
        self.models: dict[str, ModelChoice] = {}  # the model each session uses (acp/models.py)
        self.client_mcp: dict[str, ClientMcp] = {}  # the MCP servers the client passed for a session
        self.prompt_commands: dict[str, dict[str, PromptCommand]] = {}  # session -> its MCP prompts as commands
        self._tasks: set[asyncio.Task[Any]] = set()
        self.connection: Any = None
        self.editor: AcpEditor | None = None
        self.client_terminal = False

    def on_connect(self, connection: Any) -> None:
        self.connection = connection
        self.editor = AcpEditor(connection, lambda: list(self.folders.hosts), self._updates_sent,
                                permission_timeout_s=self.settings.current.permissions.ask_timeout_seconds)

    # --------------------------------------------------------------- lifecycle

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        assert self.editor is not None
        self.editor.configure(reads=bool(fs and fs.read_text_file), writes=bool(fs and fs.write_text_file))
        self.client_terminal = bool(getattr(client_capabilities, "terminal", False))
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),  # and stdio, which every agent takes
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="agent-lsp", title="agent_lsp", version=__version__),
            auth_methods=[],
            field_meta={"steering": {"supported": True}},
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # models are configured by settings and environment, not by the client

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for session in self.sessions.values():
            session.close()
        for servers in self.client_mcp.values():
            await servers.stop()
        for host in self.folders.all_hosts():
            await host.close()

    # ----------------------------------------------------------------- folders

    def _build_host(self, root: Path) -> WorkspaceHost:
        assert self.editor is not None
        host = WorkspaceHost(root, settings=self.settings.current, editor=self.editor, on_agent=self._attach,
                             env=self.env, window=self.window)
        host.warm_up()
        return host

    def _session(self, session_id: str) -> tuple[WorkspaceHost, AcpSession]:
        """A session of this connection and how the client follows it (its agent built
        again first if its host retired it)."""
        host, agent = self.folders.agent_for(session_id)
        return host, self.sessions[agent.session_id]

    # ---------------------------------------------------------------- sessions

    def _attach(self, agent: Agent) -> None:
        """Called for every agent a host builds: follow it, and give its file
        tools the client's text and its session (acp/client_editor.py)."""
        host = self.folders.attached(agent)
        old = self.sessions.pop(agent.session_id, None)
        if old is not None:
            old.close()
        self.models[agent.session_id] = ModelChoice(host, agent)
        self.sessions[agent.session_id] = AcpSession(
            agent, UpdateMapper(host.root, model_option=self.models[agent.session_id].option), self._send_update)
        if agent.session_id in self.client_mcp:  # a rebuilt agent of a session with client servers
            self.client_mcp[agent.session_id].attach(agent)
        editor = self.editor
        assert editor is not None

        agent.hooks.register("tools/execute", around_tool_hook(
            agent, host, editor, lambda: self.client_terminal, functools.partial(self._in_terminal, host, agent)),
            first=True)

    async def _in_terminal(self, host: WorkspaceHost, agent: Agent, payload: dict[str, Any]) -> Any:
        session = self.sessions[agent.session_id]
        await session.drained()  # the tool call is shown before its permission question or terminal

        async def authorize(request: Any) -> Any:
            return await host.policy.authorize(self.editor, request)

        return await run_in_terminal(self.connection, agent.session_id, payload["callId"], payload["arguments"],
                                     host.root, authorize, payload["context"], session.push)

    async def _updates_sent(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await session.drained()

    async def _send_update(self, session_id: str, update: Any) -> None:
        if isinstance(update, Notice):
            await self.connection.ext_notification(update.method, update.params)
        else:
            await self.connection.session_update(session_id=session_id, update=update)

    def _announce_commands(self, session: AcpSession) -> None:
        prompts = [command.command() for command in self.prompt_commands.get(session.session_id, {}).values()]
        session.push(AvailableCommandsUpdate(session_update="available_commands_update",
                                             available_commands=COMMANDS + prompts))

    def _managers(self, host: WorkspaceHost, session_id: str) -> list:
        """The MCP servers of a session: the folder's, then those its client passed."""
        client = self.client_mcp.get(session_id)
        return [host.mcp_manager()] + ([client.manager] if client is not None else [])

    def _offer_later(self, host: WorkspaceHost, session: AcpSession) -> None:
        """After a session/new or session/load answer: what takes a while to know,
        as updates once known (the MCP servers' prompts, the endpoint's models)."""
        session_id = session.session_id

        async def prompts() -> None:
            commands = await session_prompt_commands(self._managers(host, session_id))
            if commands != self.prompt_commands.get(session_id, {}):
                self.prompt_commands[session_id] = commands
                self._announce_commands(session)

        async def models() -> None:
            update = await self.models[session_id].listed()
            if update is not None:
                session.push(update)

        for job, what in ((prompts, "the MCP prompts"), (models, "the models")):
            task = asyncio.ensure_future(job())
            self._tasks.add(task)
            task.add_done_callback(functools.partial(self._finished, f"listing {what} of {session_id}"))

    def _finished(self, what: str, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("%s: %s", what, task.exception())

    @staticmethod
    def _client_servers(mcp_servers: Any) -> list:
        try:
            return client_servers(mcp_servers)
        except ClientServerError as error:
            raise invalid(str(error)) from None

    async def _use_client_servers(self, host: WorkspaceHost, agent: Agent, servers: list) -> None:
        """Run the servers the client passed for this session (acp/client_mcp.py)."""
        running = self.client_mcp.get(agent.session_id)
        if running is not None and running.servers == servers:
            return
        if running is not None:
            del self.client_mcp[agent.session_id]
            await running.stop(agent)
        if servers:
            assert self.editor is not None
            self.client_mcp[agent.session_id] = ClientMcp(host, servers, self.editor)
            self.client_mcp[agent.session_id].attach(agent)

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        host = self.folders.host(cwd)
        servers = self._client_servers(mcp_servers)
        agent = host.new_session()
        await self._use_client_servers(host, agent, servers)
        session = self.sessions[agent.session_id]
        asyncio.get_running_loop().call_soon(self._announce_commands, session)  # after the answer
        self._offer_later(host, session)
        return NewSessionResponse(session_id=agent.session_id, config_options=[self.models[agent.session_id].option()],
                                  modes=self._modes(host, agent.session_id))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> LoadSessionResponse:
        host = self.folders.host(cwd)
        servers = self._client_servers(mcp_servers)
        if not session_id:
            raise invalid("sessionId: must not be empty")
        try:
            agent = host.use(session_id)
        except (UnknownSession, ValueError, OSError):  # also an id no file can be named by (a path, too long, a NUL)
            raise invalid(f"unknown session {shown(session_id)} in {host.root}", sessionId=session_id) from None
        except SessionLockedError as error:
            raise in_use(session_id, error) from None
        except CorruptSessionError:  # what comes before the damage, read-only (acp/damaged.py)
            return await self._load_damaged(host, session_id)
        await self._use_client_servers(host, agent, servers)
        session = self.sessions[agent.session_id]
        try:
            session.replay()
        except UnreadableEventError:  # a damaged stream chunk line (a load does not read those): read-only now
            host.mark_damaged(session_id)
            self.sessions.pop(session_id).close()
            return await self._load_damaged(host, session_id)
        if recovered := host.take_recovered(session_id):  # a file revert a crash interrupted
            session.push(update_agent_message_text(f"\n\nagent-lsp: {recovered}\n"))
        self._announce_commands(session)
        self._offer_later(host, session)
        await session.drained()
        return LoadSessionResponse(config_options=[self.models[agent.session_id].option()],
                                   modes=self._modes(host, agent.session_id))

    async def _load_damaged(self, host: WorkspaceHost, session_id: str) -> LoadSessionResponse:
        problem = await replay_damaged(host, session_id, functools.partial(self._send_update, session_id))
        self.folders.opened_read_only(host, session_id)
        return LoadSessionResponse(modes=self._modes(host, session_id), field_meta={"agent-lsp": {"problem": problem}})

    @staticmethod
    def _modes(host: WorkspaceHost, session_id: str) -> SessionModeState:
        return SessionModeState(current_mode_id=host.modes.mode_of(session_id), available_modes=MODES)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        host, session = self._session(session_id)
        if mode_id not in PERMISSION_MODES:
            raise invalid(f"unknown mode {mode_id!r}; the modes are: {', '.join(PERMISSION_MODES)}", modeId=mode_id)
        host.modes.set_mode(session.agent, mode_id)  # logged: current_mode_update follows
        return SetSessionModeResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        hosts = [self.folders.host(cwd)] if cwd else self.folders.all_hosts()
        roots = {host.uri: str(host.root) for host in hosts}
        return ListSessionsResponse(sessions=[
            SessionInfo(session_id=info.session_id, cwd=roots[info.workspace_uri], title=info.title,
                        updated_at=datetime.fromtimestamp(info.updated_at / 1000, timezone.utc).isoformat(),
                        field_meta={"agent-lsp": {"problem": info.problem}} if info.problem else None)  # a damaged file
            for info in await list_sessions(hosts)])

    # ----------------------------------------------------------------- prompts

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        host, session = self._session(session_id)
        text = prompt_text(prompt)
        typed = "".join(getattr(block, "text", "") for block in prompt if getattr(block, "type", None) == "text")
        mentions = True  # `@server:uri` in the user's own words (not in the files they embedded) attaches it
        command = text.strip().split(maxsplit=1)
        if command and command[0] in COMMAND_NAMES:
            text = await run_slash_command(host, session.agent, command[0][1:], command[1] if len(command) > 1 else "")
            session.push(update_agent_message_text(text))
            await session.drained()
            return PromptResponse(stop_reason="end_turn")
        mcp_prompt = self.prompt_commands.get(session_id, {}).get(command[0][1:]) if command and command[0][:1] == "/" else None
        if mcp_prompt is not None:
            try:
                text = await run_prompt_command(self._managers(host, session_id), mcp_prompt,
                                                command[1] if len(command) > 1 else "")
                mentions = False  # the prompt's text is the server's, not the user's
            except Exception as error:  # PromptProblem (a missing argument), or the server failed
                session.push(update_agent_message_text(f"Could not run /{mcp_prompt.name}: {error}"))
                await session.drained()
                return PromptResponse(stop_reason="end_turn")
        choice = self.models.get(session_id)
        if choice is not None and choice.demo and not choice.warned:
            choice.warned = True  # the first answer says it plainly (not in the session log)
            session.push(update_agent_message_text(no_model_notice(host) + "\n\n"))
        message_id = f"acp_{uuid.uuid4().hex[:16]}"
        ended: list[asyncio.Future[dict[str, Any]]] = []

        def expect(agent: Agent) -> None:  # the agent that takes it: a changed rule or hook rebuilds an idle one
            ended.append(self.sessions[agent.session_id].expect(message_id))

        images = prompt_images(prompt)
        content = [{"type": "text", "text": text}, *images] if images else text
        try:
            await self.service.followup(Message(content, typed=typed), session_id=session_id, message_id=message_id,
                                        mentions=mentions, before_queue=expect)
        except ImageProblem as problem:
            raise invalid(str(problem)) from None
        reason = await ended[0]
        await self.sessions[session_id].drained()
        stop = STOP_REASONS.get(reason.get("kind", ""))
        if stop is None:  # error: the client shows the message of the failure
            error = reason.get("error") or {}
            raise RequestError(TURN_FAILED, f"{error.get('code', 'ERROR')}: {error.get('message', 'the turn failed')}",
                               {"failure": error})
        return PromptResponse(stop_reason=stop)

    async def set_config_option(self, config_id: str, session_id: str, value: Any, **kwargs: Any) -> SetSessionConfigOptionResponse:
        self._session(session_id)
        choice = self.models[session_id]
        if config_id != MODEL_OPTION:
            raise invalid(f"unknown config option {config_id!r}; the options are: {MODEL_OPTION}", configId=config_id)
        try:
            choice.choose(value if isinstance(value, str) else "")
        except KeyError:
            raise invalid(f"unknown model {value!r}; the choices are: {', '.join(choice.offered)}", value=value) from None
        except ModelSwitchError as error:
            raise invalid(str(error), value=value) from None
        return SetSessionConfigOptionResponse(config_options=[choice.option()])

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return
        cancelled = session.open_prompts()
        self.service.cancel(session_id)
        # the turn ends within its grace; the client hears `cancelled` by CANCEL_ANSWER_S at the latest
        asyncio.get_running_loop().call_later(CANCEL_ANSWER_S, session.cancel_prompts, cancelled)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in SHARED_REQUESTS:  # what the LSP face answers too (acp/shared_requests.py)
            return await shared_requests.answer(self.service, method, params)
        if method not in (STEERING_METHOD, STEER_METHOD, REMOVE_METHOD):
            raise RequestError.method_not_found(f"_{method}")
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise invalid("sessionId (a string) is required")
        _, session = self._session(session_id)
        if method == REMOVE_METHOD:
            message_id = params.get("messageId")
            if not isinstance(message_id, str):
                raise invalid("messageId (a string) is required")
            return {"removed": self.service.remove_queued(session_id, message_id)}
        text = params.get("prompt")
        if isinstance(text, list):  # text content blocks
            text = "".join(b.get("text") or "" for b in text if isinstance(b, dict) and b.get("type") == "text")
        if not isinstance(text, str) or not text.strip():
            raise invalid("prompt (text or content blocks) is required")
        if method == STEERING_METHOD:
            meta = params.get("_meta")
            steering = meta.get("steering") if isinstance(meta, dict) else None
            idle = steering.get("idleBehavior") if isinstance(steering, dict) else None
            if session.agent.status != "running" and idle == "promptRequired":  # the client sends it as a prompt
                return {"outcome": "promptRequired", "reason": "noRunningTurn"}
        queued = await self.service.steer(Message(text), session_id=session_id, idle_followup=True)
        steered = queued.delivery == "steer"
        if method == STEERING_METHOD:
            return {"outcome": "injected" if steered else "startedNewTurn", "_meta": {"messageId": queued.message_id}}
        return {"messageId": queued.message_id, "delivery": queued.delivery}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
