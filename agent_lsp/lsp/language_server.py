"""The agent_lsp language server: thin async handlers over the workspace hosts.

`create_server()` builds a server without starting it; the entry points that
start one are in `agent_lsp.lsp.server`.

Every custom request validates its params with the models of
`agent_lsp.lsp.protocol` (bad params: JSON-RPC InvalidParams naming the
field), finds the workspace host, calls the agent and answers at once; the
turn runs on and streams through the relay (`agent_lsp.lsp.relay`).
Standard-LSP paths for editors without a plugin: `workspace/executeCommand`
(agentLsp.followup | steer | cancel | newSession), code actions on a
selection or a diagnostic, `$/progress` while a session runs, and
`window/showMessage` with the answer when a command-started turn finishes.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from cattrs import ClassValidationError, transform_error
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerError
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.uris import to_fs_path

from agent_lsp import __version__
from agent_lsp.config import SettingsLayers
from agent_lsp.llm.types import message_text
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.progress import ProgressReporter
from agent_lsp.lsp.relay import Relay
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.workspace.documents import Documents

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost

# The agent, tools and providers load on first use (or in the background once
# initialized): `initialize` answers without waiting for them.
HOST_MODULE = "agent_lsp.workspace.host"

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

CONFIG_SECTION = "agentLsp"
READY_TIMEOUT_S = 5.0  # how long a request waits for settings being pulled
SHOW_MESSAGE_LIMIT = 2000  # characters of the final answer shown by window/showMessage

ASK_SELECTION_PROMPT = "Look at the selected code: explain what it does and point out any problem."


def raw_params_converter():
    """pygls' converter, but params/results of custom methods stay plain dicts
    (the default turns them into namedtuples); the pydantic models validate them."""
    converter = default_converter()
    converter.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    return converter


class _Unreadable:
    """A request whose params pygls could not structure: answered with InvalidParams."""

    def __init__(self, msg_id: Any, message: str):
        self.id = msg_id
        self.message = message


class AgentProtocol(LanguageServerProtocol):
    """pygls' protocol, except that a request with malformed params gets an
    InvalidParams answer naming the problem (pygls logs it and never answers,
    which leaves the client waiting forever)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" in data and "method" in data:
                return _Unreadable(data["id"], _structure_problem(data["method"], error))
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            self._send_response(message.id, None, JsonRpcInvalidParams(message.message).to_response_error())
            return
        super().handle_message(message)


def _structure_problem(method: str, error: Exception) -> str:
    cause = error.__cause__
    if isinstance(cause, ClassValidationError):
        details = "; ".join(transform_error(cause, path="request")[:5])
        return f"invalid params for {method}: {details}"
    return f"invalid params for {method}"


class SessionInUse(JsonRpcServerError):
    """The session is open in another agent-lsp process (another editor window on
    the same folder); `data` names that process."""

    CODE = wire.SESSION_IN_USE_CODE

    def __init__(self, error: SessionLockedError):
        super().__init__(str(error), code=self.CODE, data={"sessionId": error.session_id, "pid": error.pid})


def parse(model: type[M], params: Any) -> M:
    """Validate custom params; a problem becomes InvalidParams with a readable message."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(f"params must be an object, got {type(params).__name__}")
    try:
        return model.model_validate(params)
    except ValidationError as error:
        raise JsonRpcInvalidParams(wire.describe_validation_error(error)) from None


def _uri_to_path(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def _context_dicts(items: list[wire.ContextItem] | None) -> list[dict[str, Any]] | None:
    return [wire.wire_dump(item) for item in items] if items else None


def _content(content: wire.Content) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else [wire.wire_dump(block) for block in content]


class AgentLanguageServer(LanguageServer):
    def __init__(self, env: Mapping[str, str] = os.environ):
        super().__init__(
            "agent-lsp",
            __version__,
            converter_factory=raw_params_converter,
            protocol_cls=AgentProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            max_workers=8,
        )
        self.env = env
        self.documents = Documents()
        self.editor = LspEditor(self, self.documents)
        self.settings = SettingsLayers(env)
        self.folders: dict[Path, WorkspaceHost | None] = {}  # a host is built on first use
        self.backlog: Callable[[], int] = lambda: 0
        self.relay = Relay(self._send_notification, backlog=lambda: self.backlog())
        self.progress = ProgressReporter(self, self.spawn)
        self.command_sessions: set[str] = set()  # their turn's end is shown with window/showMessage
        # Held while settings are pulled and applied; agent requests wait for it, so a
        # request sent after didChangeConfiguration runs with the new settings.
        self._settings_lock = asyncio.Lock()
        self._pending_problems: list[str] = list(self.settings.problems)
        self._tasks: set[asyncio.Task] = set()
        self._relayed: dict[str, int] = {}  # session id -> the next seq the client has not been sent

    # --------------------------------------------------------------- plumbing

    def report_server_error(self, error: Exception, source: Any) -> None:
        # The default pops "Error in server" dialogs; an agent product logs instead.
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    def spawn(self, coroutine) -> asyncio.Task:
        """A background task with a strong reference (otherwise it may be collected)."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _send_notification(self, method: str, params: dict[str, Any]) -> None:
        self.protocol.notify(method, params)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_problems(self, problems: list[str]) -> None:
        for problem in problems:
            log.warning("%s", problem)
            self.show(f"agent-lsp: {problem}", types.MessageType.Warning)

    async def ready(self) -> None:
        """Wait until settings being pulled or applied (initialized, didChangeConfiguration) are in place."""
        try:
            await asyncio.wait_for(self._settings_lock.acquire(), READY_TIMEOUT_S)
        except asyncio.TimeoutError:
            log.warning("settings still being pulled after %.0f s; going on", READY_TIMEOUT_S)
            return
        self._settings_lock.release()

    # ---------------------------------------------------------------- hosts

    def add_folder(self, root: Path) -> Path:
        root = root.resolve()
        self.folders.setdefault(root, None)
        return root

    def host(self, root: Path) -> WorkspaceHost:
        root = self.add_folder(root)
        host = self.folders[root]
        if host is None:
            from agent_lsp.workspace.host import WorkspaceHost

            host = WorkspaceHost(root, settings=self.settings.current, editor=self.editor, env=self.env, on_agent=self.attach)
            self.folders[root] = host
        return host

    @property
    def hosts(self) -> list[WorkspaceHost]:
        """Every folder's host (built now if need be)."""
        return [self.host(root) for root in list(self.folders)]

    @property
    def live_hosts(self) -> list[WorkspaceHost]:
        return [host for host in self.folders.values() if host is not None]

    async def remove_folder(self, root: Path) -> None:
        host = self.folders.pop(root.resolve(), None)
        if host is not None:
            await host.close()

    def warm_up(self) -> None:
        """Import the agent machinery in the background, so the first request is quick."""
        import importlib

        def load() -> None:
            importlib.import_module(HOST_MODULE)
            release_free_memory()

        threading.Thread(target=load, name="agent-lsp-warm-up", daemon=True).start()

    def host_for_uri(self, uri: str | None) -> WorkspaceHost:
        """The host of a workspace folder URI (or of a folder containing it); no URI: the first folder."""
        if uri is None:
            if self.folders:
                return self.host(next(iter(self.folders)))
            return self.host(Path.cwd())  # no folder, no rootUri: where the editor started us
        path = _uri_to_path(uri)
        if path is None:
            raise JsonRpcInvalidParams(f"workspaceUri: not a file URI: {uri}")
        path = path.resolve()
        for root in list(self.folders):
            if path == root or root in path.parents:
                return self.host(root)
        if path.is_dir():
            return self.host(path)
        raise JsonRpcInvalidParams(f"workspaceUri: not a workspace folder: {uri}")

    def host_for_session(self, session_id: str) -> WorkspaceHost:
        for host in self.live_hosts:
            if session_id in host.agents:
                return host
        for host in self.hosts:
            if host.has_session(session_id):
                return host
        raise JsonRpcInvalidParams(f"unknown session {session_id}")

    def agent_for(self, session_id: str) -> tuple[WorkspaceHost, Agent]:
        host = self.host_for_session(session_id)
        try:
            return host, host.use(session_id)
        except KeyError:  # UnknownSession: deleted meanwhile
            raise JsonRpcInvalidParams(f"unknown session {session_id}") from None
        except SessionLockedError as error:
            raise SessionInUse(error) from None

    # ------------------------------------------------------- agent -> client

    def attach(self, agent: Agent) -> None:
        """Stream a new agent's events to the client."""
        sid = agent.session_id
        relay = self.relay
        relayed = self._relayed
        # An agent rebuilt for a session this client already follows (new settings)
        # starts from a fresh load, which may have appended events (session/end-seed):
        # send what the client has not seen, so every seq reaches it once.
        if sid in relayed:
            for event in agent.session.events[relayed[sid]:]:
                relay.durable(sid, event)

        def durable(event: Any) -> None:
            relayed[sid] = event.seq + 1
            relay.durable(sid, event)

        agent.session.subscribe(durable)
        agent.session.subscribe(lambda event: self._progress_of(sid, event))
        agent.on("agent/status", lambda p: self._on_status(agent, p))
        agent.on("agent/inbox/inserted", lambda p: relay.live(sid, "agent/inbox/inserted", self._inserted(agent, p)))
        agent.on("agent/inbox/discarded", lambda p: relay.live(sid, "agent/inbox/discarded", {"message": p["message"]}))
        agent.on("agent/inbox/claimed", lambda p: relay.live(sid, "agent/inbox/claimed", {"message": p["message"], "turn": p["turn"]}))
        agent.on("agent/error", lambda p: relay.live(sid, "agent/error", self._error(p)))
        agent.on("tools/progress", lambda p: relay.tool_progress(sid, p.get("callId", ""), p.get("data") or {}))

    def _progress_of(self, session_id: str, event: Any) -> None:
        if event.type == "tool/call":
            self.progress.report(session_id, f"{event.data.get('name', 'tool')}")

    @staticmethod
    def _inserted(agent: Agent, payload: dict[str, Any]) -> dict[str, Any]:
        message = payload["message"]
        target = payload.get("target")
        if target not in ("next-turn", "next-step"):
            in_step = any(m.get("id") == message.get("id") for m in agent.inbox.next_step)
            target = "next-step" if in_step else "next-turn"
        return {"target": target, "message": message}

    @staticmethod
    def _error(payload: dict[str, Any]) -> dict[str, Any]:
        error = dict(payload.get("error") or {})
        error.setdefault("code", "UNKNOWN")
        error.setdefault("message", error["code"])
        return {"turn": payload.get("turn"), "step": payload.get("step"), "error": error}

    def _on_status(self, agent: Agent, payload: dict[str, Any]) -> None:
        sid, status = agent.session_id, payload["status"]
        self.relay.live(sid, "agent/status", {"status": status})
        if status == "running":
            self.progress.running(sid, "agent-lsp: working", lambda: agent.cancel("user"))
            return
        self.progress.idle(sid)
        if sid in self.command_sessions:
            self.command_sessions.discard(sid)
            kind, text = self._turn_outcome(agent)
            if text:
                self.show(text[:SHOW_MESSAGE_LIMIT], kind)

    @staticmethod
    def _turn_outcome(agent: Agent) -> tuple[types.MessageType, str]:
        """What to tell the user of a command-started turn: its answer, or why it ended without one."""
        reason: dict[str, Any] = {}
        for event in reversed(agent.session.events):
            if event.type == "turn/end" and not reason:
                reason = event.data.get("reason") or {}
            elif event.type == "assistant/message":
                answer = message_text(event.data.get("message", {})).strip()
                if answer and reason.get("kind") in ("completed", "max-tokens", None):
                    return types.MessageType.Info, answer
                break
            elif event.type == "turn/start":
                break
        if reason.get("kind") == "error":
            error = reason.get("error") or {}
            return types.MessageType.Error, f"agent-lsp: {error.get('code', 'error')}: {error.get('message', '')}".rstrip(": ")
        if reason.get("kind") == "aborted":
            return types.MessageType.Info, "agent-lsp: cancelled"
        return types.MessageType.Info, ""

    # ------------------------------------------------------------- settings

    async def pull_configuration(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            values = await asyncio.shield(
                self.protocol.send_request_async(
                    types.WORKSPACE_CONFIGURATION,
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIG_SECTION)]),
                )
            )
        except Exception as error:
            log.warning("workspace/configuration failed: %s", error)
            return
        value = values[0] if values else None
        await self.apply_settings("workspace", value, source="workspace/configuration agentLsp")

    async def apply_settings(self, layer: str, value: Any, *, source: str) -> None:
        before = self.settings.current
        problems = self.settings.set_layer(layer, value or {}, source=source)
        self.report_problems(problems)
        if self.settings.current != before:
            self._apply_log_level()
            for host in self.live_hosts:
                await host.update_settings(self.settings.current)

    def _apply_log_level(self) -> None:
        level = self.settings.current.log_level
        if level is not None:  # else the command line's --log-level stands
            logging.getLogger("agent_lsp").setLevel(level.upper())


# ============================================================== the handlers


def _register(server: AgentLanguageServer) -> None:
    """Every handler; each is a thin shim over the hosts and agents."""

    # ------------------------------------------------------------ lifecycle

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: AgentLanguageServer, params: types.InitializeParams) -> None:
        experimental = params.capabilities.experimental
        agent_caps = experimental.get("agentLsp") if isinstance(experimental, dict) else None
        try:
            ls.editor.agent_caps = wire.AgentLspClientCapabilities.model_validate(agent_caps or {})
        except ValidationError as error:
            ls._pending_problems.append(f"capabilities.experimental.agentLsp: {wire.describe_validation_error(error)}")
        ls._pending_problems += ls.settings.set_layer(
            "initializationOptions", params.initialization_options or {}, source="initializationOptions"
        )
        ls._apply_log_level()
        for folder in params.workspace_folders or []:
            path = _uri_to_path(folder.uri)
            if path is not None:
                ls.add_folder(path)
        if not ls.folders:
            root = _uri_to_path(params.root_uri) if params.root_uri else (Path(params.root_path) if params.root_path else None)
            if root is not None:
                ls.add_folder(root)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: AgentLanguageServer, params: types.InitializedParams) -> None:
        ls.warm_up()
        async with ls._settings_lock:
            ls.report_problems(ls._pending_problems)
            ls._pending_problems = []
            await ls.pull_configuration()

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: AgentLanguageServer, params: Any) -> None:
        hosts, ls.folders = ls.live_hosts, {}
        for host in hosts:
            await host.close()
        ls.relay.close()
        kill_running_commands()

    @server.feature(types.EXIT)
    def on_exit(ls: AgentLanguageServer, params: Any) -> None:
        kill_running_commands()  # `exit` without `shutdown` too: no shell child outlives the server

    # ----------------------------------------------------------- workspace

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: AgentLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = _uri_to_path(folder.uri)
            if path is not None:
                await ls.remove_folder(path)
        for folder in params.event.added:
            path = _uri_to_path(folder.uri)
            if path is not None:
                ls.add_folder(path)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(ls: AgentLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        async with ls._settings_lock:
            caps = ls.client_capabilities.workspace
            if caps and caps.configuration:
                await ls.pull_configuration()
            elif isinstance(params.settings, dict) and CONFIG_SECTION in params.settings:
                await ls.apply_settings("workspace", params.settings[CONFIG_SECTION], source="didChangeConfiguration agentLsp")

    # ----------------------------------------------------------- documents

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(ls: AgentLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = _uri_to_path(doc.uri)
        if path is not None:
            ls.documents.open(path, doc.text, doc.version, doc.language_id, uri=doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: AgentLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        # pygls has applied the change (in the negotiated encoding) to its copy: take its text.
        path = _uri_to_path(params.text_document.uri)
        if path is not None:
            text = ls.workspace.get_text_document(params.text_document.uri).source
            ls.documents.change(path, params.text_document.version, [(None, text)])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: AgentLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        path = _uri_to_path(params.text_document.uri)
        if path is not None:
            ls.documents.close(path)

    # --------------------------------------------------------- agent/* requests

    @server.feature("agent/followup")
    async def followup(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.FollowupParams, params)
        await ls.ready()
        return wire.wire_dump(start_followup(ls, p.session_id, p.workspace_uri, p.content, p.context))

    @server.feature("agent/steer")
    async def steer(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SteerParams, params)
        await ls.ready()
        _, agent = ls.agent_for(p.session_id)
        message = agent.steer(_content(p.content), context=_context_dicts(p.context))
        return wire.wire_dump(wire.MessageRef(session_id=agent.session_id, message_id=message["id"]))

    @server.feature("agent/cancel")
    async def cancel(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.CancelParams, params)
        _, agent = ls.agent_for(p.session_id)
        agent.cancel("user", keep_inbox=p.keep_inbox)
        return {}

    @server.feature("agent/inbox/remove")
    async def inbox_remove(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.InboxRemoveParams, params)
        _, agent = ls.agent_for(p.session_id)
        return wire.wire_dump(wire.InboxRemoveResult(removed=agent.remove(p.message_id)))

    @server.feature("agent/session/new")
    async def session_new(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionNewParams, params)
        await ls.ready()
        agent = ls.host_for_uri(p.workspace_uri).new_session(title=p.title)
        return wire.wire_dump(wire.SessionRef(session_id=agent.session_id))

    @server.feature("agent/session/list")
    async def session_list(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionListParams, params)
        await ls.ready()
        hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
        sessions = []
        for host in hosts:
            for s in host.list_sessions():
                sessions.append(
                    wire.SessionInfo(
                        session_id=s.session_id,
                        workspace_uri=host.uri,
                        title=s.title,
                        created_at=s.created_at,
                        updated_at=s.updated_at,
                        turns=s.turns,
                        status=s.status,
                    )
                )
        sessions.sort(key=lambda s: s.updated_at, reverse=True)
        return wire.wire_dump(wire.SessionListResult(sessions=sessions))

    @server.feature("agent/session/load")
    async def session_load(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRef, params)
        await ls.ready()
        try:
            host, agent = ls.agent_for(p.session_id)
        except SessionInUse:  # open in another window's server: a read-only snapshot
            return wire.wire_dump(_snapshot_result(ls.host_for_session(p.session_id), p.session_id))
        ls.relay.flush_session(agent.session_id)  # the client sees nothing twice out of order
        result = wire.SessionLoadResult(
            session_id=agent.session_id,
            workspace_uri=host.uri,
            status=agent.status,
            events=[e.to_json() for e in agent.session.events],
            inbox=wire.Inbox(next_turn=list(agent.inbox.next_turn), next_step=list(agent.inbox.next_step)),
        )
        return wire.wire_dump(result)

    @server.feature("agent/session/delete")
    async def session_delete(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRef, params)
        try:
            host = ls.host_for_session(p.session_id)
        except JsonRpcInvalidParams:
            return wire.wire_dump(wire.SessionDeleteResult(deleted=False))
        try:
            deleted = await host.delete_session(p.session_id)
        except SessionLockedError as error:
            raise SessionInUse(error) from None
        return wire.wire_dump(wire.SessionDeleteResult(deleted=deleted))

    @server.feature("agent/session/compact")
    async def session_compact(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.SessionRef, params)
        _, agent = ls.agent_for(p.session_id)
        from agent_lsp.agent.compaction import CompactionError

        if agent.status != "idle":
            return wire.wire_dump(wire.SessionCompactResult(compacted=False))
        try:
            outcome = await agent.compact_now()
        except CompactionError as error:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # $/cancelRequest stopped it: say so
                raise asyncio.CancelledError() from None
            log.info("compaction of %s did not happen: %s", p.session_id, error)
            return wire.wire_dump(wire.SessionCompactResult(compacted=False))
        return wire.wire_dump(wire.SessionCompactResult(compacted=outcome is not None))

    @server.feature("agent/turn/revert")
    async def turn_revert(ls: AgentLanguageServer, params: Any) -> dict:
        p = parse(wire.TurnRevertParams, params)
        host = ls.host_for_session(p.session_id)
        try:
            report = await host.revert_turn(p.session_id, p.turn)
        except SessionLockedError as error:
            raise SessionInUse(error) from None
        return wire.wire_dump(
            wire.TurnRevertResult(
                reverted=[str(path) for path in report.reverted],
                skipped=[wire.SkippedPath(path=str(s.path), reason=s.reason) for s in report.skipped],
            )
        )

    # ----------------------------------------------------------- commands

    @server.command("agentLsp.followup")
    async def cmd_followup(ls: AgentLanguageServer, *args: Any) -> dict:
        p = _command_args(args)
        await ls.ready()
        ref = start_followup(ls, p.session_id, p.workspace_uri, p.content, p.context, use_current=True)
        ls.command_sessions.add(ref.session_id)
        return wire.wire_dump(ref)

    @server.command("agentLsp.steer")
    async def cmd_steer(ls: AgentLanguageServer, *args: Any) -> dict:
        p = _command_args(args)
        await ls.ready()
        if p.session_id:
            _, agent = ls.agent_for(p.session_id)
        else:
            agent = ls.host_for_uri(p.workspace_uri).current()
        message = agent.steer(_content(p.content), context=_context_dicts(p.context))
        ls.command_sessions.add(agent.session_id)
        return wire.wire_dump(wire.MessageRef(session_id=agent.session_id, message_id=message["id"]))

    @server.command("agentLsp.cancel")
    async def cmd_cancel(ls: AgentLanguageServer, *args: Any) -> dict:
        session_id, keep_inbox, workspace_uri = None, False, None
        if args and isinstance(args[0], str):
            session_id = args[0]
        elif args and isinstance(args[0], dict):
            session_id = args[0].get("sessionId")
            keep_inbox = bool(args[0].get("keepInbox", False))
            workspace_uri = args[0].get("workspaceUri")
        if session_id:
            _, agent = ls.agent_for(session_id)
        else:
            host = ls.host_for_uri(workspace_uri)
            if host.current_session_id is None:
                return {}
            agent = host.current()
        agent.cancel("user", keep_inbox=keep_inbox)
        return {}

    @server.command("agentLsp.newSession")
    async def cmd_new_session(ls: AgentLanguageServer, *args: Any) -> dict:
        options = args[0] if args and isinstance(args[0], dict) else {}
        p = parse(wire.SessionNewParams, options)
        await ls.ready()
        agent = ls.host_for_uri(p.workspace_uri).new_session(title=p.title)
        return wire.wire_dump(wire.SessionRef(session_id=agent.session_id))

    # -------------------------------------------------------- code actions

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]),
    )
    def code_actions(ls: AgentLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return build_code_actions(ls, params)


def _snapshot_result(host: WorkspaceHost, session_id: str) -> wire.SessionLoadResult:
    try:
        snapshot = host.snapshot(session_id)
    except KeyError:
        raise JsonRpcInvalidParams(f"unknown session {session_id}") from None
    return wire.SessionLoadResult(
        session_id=session_id,
        workspace_uri=host.uri,
        status="running" if snapshot.running else "idle",
        events=[e.to_json() for e in snapshot.events],
        inbox=wire.Inbox(next_turn=snapshot.next_turn, next_step=snapshot.next_step),
        held_by_pid=snapshot.held_by or 0,
    )


def _command_args(args: tuple[Any, ...]) -> wire.FollowupCommandArgs:
    if len(args) != 1:
        raise JsonRpcInvalidParams("arguments: expected one argument, the message text or {content, sessionId?, context?}")
    value = args[0]
    if isinstance(value, str):
        value = {"content": value}
    return parse(wire.FollowupCommandArgs, value)


def start_followup(
    ls: AgentLanguageServer,
    session_id: str | None,
    workspace_uri: str | None,
    content: wire.Content,
    context: list[wire.ContextItem] | None,
    *,
    use_current: bool = False,
) -> wire.MessageRef:
    """Queue a followup; no session: the workspace's current one (commands) or a new one."""
    if session_id:
        _, agent = ls.agent_for(session_id)
    else:
        host = ls.host_for_uri(workspace_uri)
        agent = host.current() if use_current else host.new_session()
    message = agent.followup(_content(content), context=_context_dicts(context))
    return wire.MessageRef(session_id=agent.session_id, message_id=message["id"])


def _range_text(ls: AgentLanguageServer, uri: str, range_: types.Range) -> str:
    try:
        doc = ls.workspace.get_text_document(uri)
        return doc.source[doc.offset_at_position(range_.start) : doc.offset_at_position(range_.end)]
    except Exception:
        return ""


def _range_dict(range_: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": range_.start.line, "character": range_.start.character},
        "end": {"line": range_.end.line, "character": range_.end.character},
    }


def build_code_actions(ls: AgentLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    path = _uri_to_path(uri)
    workspace_uri = None
    if path is not None:
        try:
            workspace_uri = ls.host_for_uri(uri).uri
        except JsonRpcInvalidParams:
            workspace_uri = None
    actions: list[types.CodeAction] = []
    for diagnostic in params.context.diagnostics:
        line_range = types.Range(
            start=types.Position(line=diagnostic.range.start.line, character=0),
            end=types.Position(line=diagnostic.range.end.line + 1, character=0),
        )
        argument = {
            "content": f"Fix this problem: {diagnostic.message}",
            "context": [
                {
                    "kind": "diagnostic",
                    "uri": uri,
                    "range": _range_dict(diagnostic.range),
                    "message": diagnostic.message,
                    "text": _range_text(ls, uri, line_range),
                }
            ],
        }
        if workspace_uri:
            argument["workspaceUri"] = workspace_uri
        actions.append(
            types.CodeAction(
                title=f"Fix with agent: {diagnostic.message[:80]}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title="Fix with agent", command="agentLsp.followup", arguments=[argument]),
            )
        )
    if params.range.start != params.range.end:
        argument = {
            "content": ASK_SELECTION_PROMPT,
            "context": [{"kind": "selection", "uri": uri, "range": _range_dict(params.range), "text": _range_text(ls, uri, params.range)}],
        }
        if workspace_uri:
            argument["workspaceUri"] = workspace_uri
        actions.append(
            types.CodeAction(
                title="Ask agent about selection",
                kind=types.CodeActionKind.Refactor,
                command=types.Command(title="Ask agent about selection", command="agentLsp.followup", arguments=[argument]),
            )
        )
    return actions


def release_free_memory() -> None:
    """Collect import-time garbage and hand freed heap pages back to the OS (glibc),
    so an idle server stays small."""
    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def kill_running_commands() -> None:
    """Kill the agent's running shell commands (their process groups), if the tools are loaded."""
    shell = sys.modules.get("agent_lsp.tools.shell")
    if shell is not None:
        shell.kill_running_commands(sweep_children=True)


def install_sigterm_handler() -> None:
    """On SIGTERM, kill the running shell commands, then die of SIGTERM as before
    (their groups are not our process group, so they would survive us)."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: Any) -> None:
        kill_running_commands()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)


def create_server(env: Mapping[str, str] = os.environ) -> AgentLanguageServer:
    # pygls logs every outgoing message at INFO: keep it quiet unless debugging.
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("pygls").setLevel(logging.WARNING)
    server = AgentLanguageServer(env)
    _register(server)
    install_sigterm_handler()
    return server
