"""The first messages of a start, answered before pygls has loaded.

pygls imports lsprotocol's whole type library and builds a cattrs converter
over it: about half a second of CPU before it can dispatch anything. A client
that opens a session as soon as it has started (`agent-lsp run`, a panel that
opens with the editor) would wait for all of it. So while the connection
starts, this module answers the opening of the conversation itself, from the
raw JSON:

    initialize           from the description of the server's capabilities
                         (`agent_lsp.lsp.handshake`, `agent_lsp.lsp.capabilities`)
    initialized          settings made, their problems shown (window/showMessage);
                         for a client that declares `workspace/configuration`,
                         the settings are asked for, as the server asks
    workspace/didChangeConfiguration   before the first session: asked again (or
                         the settings it carries applied), as the server does
    agent/session/new    the workspace host and the session built, the id answered

in that order, as long as each is plain enough to answer exactly as the server
would. The document notifications (didOpen, didChange, didClose, didSave),
which the server answers with nothing, are kept and given to it in order at
the hand-over. While the settings asked for have not come, every message
waits, as the server's requests wait for them, and is taken in order once
they have.

The first message that is not plain (any other method, params that are not
the plain form, a folder that is not one of the workspace's) ends the early
phase: it and every later message wait, in order, for the server
(`agent_lsp.lsp.server` queues them), which then answers them as it always
does, errors included; a settings answer still to come is the server's too,
as if it had asked. So the early phase never answers differently from the
server: what it cannot answer the same way, it leaves to it. (One exception:
client capabilities malformed deep inside, which no editor sends, get the
early `initialize` answer where pygls would answer an error; the hand-over
logs it, see `agent_lsp.lsp.capabilities`.)

Once pygls has loaded, `hand_over` gives the server what the early phase made:
it replays `initialize`, `initialized` and the document notifications into it
(their answers, the problems already sent and the settings asked for are not
sent or asked again), and puts the hosts and their
sessions in place, as if the server had built them. No turn runs before the
hand-over (a prompt is not an early message), so the sessions have sent
nothing to the client yet: they are attached to the relay then, and stream
from their first event.

This module must not import pygls or lsprotocol; the settings and the
workspace host are imported when the first message that needs them comes.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from agent_lsp.jsonrpc import INTERNAL_ERROR_MESSAGE
from agent_lsp.lsp.handshake import EarlyInitialize, frame
from agent_lsp.visible import visible

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.config.layers import SettingsLayers
    from agent_lsp.workspace.host import WorkspaceHost

log = logging.getLogger(__name__)

# What the server answers when a handler fails unexpectedly (the traceback goes to the log).
INTERNAL_ERROR_CODE = -32603
WARNING = 2  # window/showMessage's MessageType.Warning

# The notifications kept for the server, which answers them with nothing and sends nothing.
DOCUMENT_NOTIFICATIONS = frozenset({"textDocument/didOpen", "textDocument/didChange",
                                    "textDocument/didClose", "textDocument/didSave"})
# The early `workspace/configuration`'s id (pygls' own are UUIDs).
CONFIGURATION_ID = "agent-lsp-early-configuration"
# The settings section, and the sources of the settings' "workspace" layer; the server's
# (`features/lifecycle.py`) too, which imports them from here, a module without pygls.
CONFIG_SECTION = "agentLsp"
CONFIGURATION_SOURCE = "workspace/configuration agentLsp"
CHANGE_SOURCE = "didChangeConfiguration agentLsp"
MAX_HELD = 32  # messages held while the settings are awaited (the reader reads 64 ahead)

# The plain form of agent/session/new params answered early: these keys, string or null
# values (the wire model, `SessionNewParams`, accepts more; the server validates the rest,
# and makes a session in its own worktree, `worktree`, itself).
SESSION_NEW_KEYS = frozenset({"workspaceUri", "title"})


class LateEditor:
    """The editor port of the hosts built early: it forwards to the server's LSP
    editor once there is one (`hand_over`). Nothing calls it before: only a turn
    uses the editor, and no turn runs in the early phase."""

    def __init__(self) -> None:
        self.target: Any = None

    def __getattr__(self, name: str) -> Any:
        target = self.__dict__["target"]
        if target is None:
            raise RuntimeError(f"the editor is not connected yet (editor.{name})")
        return getattr(target, name)


class EarlyPhase:
    """Answers the opening messages of a connection until the server takes over."""

    def __init__(self, writer: Any, process: Any, env: Mapping[str, str] = os.environ, window: str | None = None):
        self.writer = writer
        self.process = process
        self.env = env
        self.window = window  # the connection of the agent host this is (None: the process serves one)
        self.open = True  # False once a message had to be left to the server
        self.initialize: EarlyInitialize | None = None  # the `initialize` seen (answered here or not)
        self.initialize_body: bytes | None = None  # set when it was answered here
        self.initialized_body: bytes | None = None  # set when it was handled here
        self.params: dict[str, Any] = {}
        self.settings: SettingsLayers | None = None
        self.folders: list[Path] = []
        self.hosts: dict[Path, WorkspaceHost] = {}
        self.agents: list[Agent] = []
        self.editor = LateEditor()
        self.deferred: list[bytes] = []  # document notifications, for the server at the hand-over
        self.held: list[Any] = []  # messages read while the settings asked for are awaited
        # The settings asked for with `workspace/configuration` (`asked` times): None
        # (not asked), "asked", "answered" or "failed" (for the last time asked).
        self.configuration: str | None = None
        self.asked = 0
        self.workspace_layer: tuple[Any, str] | None = None  # the settings applied as the server's "workspace" layer
        self.release: Any = lambda: None  # gives a handled message's room in the read-ahead back

    # ------------------------------------------------------------ messages

    def receive(self, item: Any) -> list[Any]:
        """Handle one message (a frame's body) now if it can be, or hold it;
        what is left to the server, in order: nothing while the early phase goes
        on, else the messages it held and those it could not answer (and every
        message after them is the server's)."""
        if not self.open:
            return [item]
        if self.configuration == "asked":
            if self._try(item, self._configuration_answer):
                self.release()
                held, self.held = self.held, []
                return self._take(held)
            if len(self.held) < MAX_HELD:
                self.held.append(item)
                return []
            return self._end([item])
        return self._take([item])

    def _take(self, items: list[Any]) -> list[Any]:
        """Handle `items` in order; those from the first one not handled on are
        the server's; those after one that asked for the settings again are held."""
        for index, item in enumerate(items):
            if not self._try(item, self._handle):
                return self._end(items[index:])
            self.release()
            if self.configuration == "asked":
                self.held = items[index + 1:]
                break
        return []

    def _end(self, items: list[Any]) -> list[Any]:
        self.open = False
        held, self.held = self.held, []
        return held + items

    def _try(self, item: Any, handle: Any) -> bool:
        try:
            return isinstance(item, bytes) and handle(item)
        except Exception:  # nothing was answered: the server answers it
            log.exception("the early answer of a message failed; the server answers it")
            return False

    def _handle(self, body: bytes) -> bool:
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):  # the server answers it
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        handled = self._dispatch(body, message)
        if handled:
            log.debug("answered %s before the server loaded", message.get("method"))
        return handled

    def _dispatch(self, body: bytes, message: dict[str, Any]) -> bool:
        method = message.get("method")
        if self.initialize is None:
            return method == "initialize" and self._initialize(body, message)
        if self.initialized_body is None:
            return method == "initialized" and "id" not in message and self._initialized(body)
        if method == "agent/session/new" and _is_id(message.get("id")):
            return self._session_new(message["id"], message.get("params"))
        if method in DOCUMENT_NOTIFICATIONS and "id" not in message:
            self.deferred.append(body)
            return True
        if method == "workspace/didChangeConfiguration" and "id" not in message and not self.hosts:
            return self._configuration_changed(message.get("params"))
        return False

    def _initialize(self, body: bytes, message: dict[str, Any]) -> bool:
        if not _is_id(message.get("id")):
            return False
        self.initialize = EarlyInitialize.answer(message, self.writer)
        if self.initialize.answered is None:  # not plain: pygls answers
            return False
        self.initialize_body = body
        params = message.get("params")
        self.params = params if isinstance(params, dict) else {}
        return True

    def answers_initialized(self) -> bool:
        """Whether the `initialize` answered here lets the early phase answer
        `initialized` too (and sessions after it): not for params not in the plain form."""
        params = self.params
        return (self.open and self.initialize_body is not None and isinstance(params.get("capabilities"), dict)
                and _plain_agent_caps(params) and _pulls_configuration(params) is not None
                and _folders(params) is not None)

    def _initialized(self, body: bytes) -> bool:
        """Settings from initializationOptions, their problems shown, and for a
        client that declares it, `workspace/configuration` asked: what the server
        does at `initialized`."""
        if not self.answers_initialized():
            return False
        folders = _folders(self.params)
        assert folders is not None
        from agent_lsp.config.layers import SettingsLayers

        layers = SettingsLayers(self.env)
        options = self.params.get("initializationOptions")
        problems = list(layers.problems) + layers.set_layer("initializationOptions", options or {},
                                                            source="initializationOptions")
        self.settings = layers
        self._settings_applied(problems)
        self.folders = folders
        self.initialized_body = body
        if _pulls_configuration(self.params):
            self._ask_configuration()
        return True

    def _ask_configuration(self) -> None:
        self.asked += 1
        self._send({"jsonrpc": "2.0", "id": self._configuration_id(), "method": "workspace/configuration",
                    "params": {"items": [{"section": CONFIG_SECTION}]}})
        self.configuration = "asked"

    def _configuration_id(self) -> str:
        return f"{CONFIGURATION_ID}-{self.asked}"

    def _configuration_answer(self, body: bytes) -> bool:
        """The answer to the early `workspace/configuration`, applied as the server
        applies its own; False for any other message, or an answer of another shape."""
        message = json.loads(body)
        if not (isinstance(message, dict) and message.get("id") == self._configuration_id()
                and "method" not in message and message.get("jsonrpc") == "2.0"):
            return False
        if "error" in message:
            log.warning("workspace/configuration failed: %s", message["error"])
            self.configuration = "failed"
            return True
        values = message.get("result")
        if not (values is None or isinstance(values, list)):
            return False
        self._set_workspace_layer(values[0] if values else None, CONFIGURATION_SOURCE)
        self.configuration = "answered"
        log.debug("applied the settings asked for before the server loaded")
        return True

    def _configuration_changed(self, params: Any) -> bool:
        """`workspace/didChangeConfiguration` before the first session: the
        settings asked for again, or (a client that does not answer
        `workspace/configuration`) those it sent, applied; as the server does."""
        if not (isinstance(params, dict) and "settings" in params):
            return False
        if _pulls_configuration(self.params):
            self._ask_configuration()
        elif isinstance(params["settings"], dict) and CONFIG_SECTION in params["settings"]:
            self._set_workspace_layer(params["settings"][CONFIG_SECTION], CHANGE_SOURCE)
        return True

    def _set_workspace_layer(self, value: Any, source: str) -> None:
        assert self.settings is not None
        self._settings_applied(self.settings.set_layer("workspace", value or {}, source=source))
        self.workspace_layer = (value or {}, source)

    def _settings_applied(self, problems: list[str]) -> None:
        assert self.settings is not None
        level = self.settings.current.log_level
        if level is not None:  # else the command line's --log-level stands
            logging.getLogger("agent_lsp").setLevel(level.upper())
        for problem in problems:
            log.warning("%s", problem)
            self._send({"jsonrpc": "2.0", "method": "window/showMessage",
                        "params": {"type": WARNING, "message": visible(f"agent-lsp: {problem}")}})

    def _session_new(self, request_id: Any, params: Any) -> bool:
        plain = _plain_session_new(params)
        if plain is None:
            return False
        workspace_uri, title = plain
        root = self._root_for(workspace_uri)
        if root is None:
            return False
        try:
            agent = self._host(root).new_session(title=title)
        except Exception:
            log.exception("agent/session/new failed")
            self._send({"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": INTERNAL_ERROR_CODE, "message": INTERNAL_ERROR_MESSAGE}})
            return True
        self._send({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": agent.session_id}})
        return True

    def _root_for(self, workspace_uri: str | None) -> Path | None:
        """The folder a session/new is for, when it is one of the workspace's (no
        URI: the first folder, or the current directory when there is none)."""
        if workspace_uri is None:
            return self.folders[0] if self.folders else Path.cwd().resolve()
        from agent_lsp.tools.paths import file_uri_to_path

        try:
            path = file_uri_to_path(workspace_uri).resolve()
        except (OSError, ValueError):
            return None
        # the server takes the first folder holding the path (folders may nest)
        holder = next((root for root in self.folders if root == path or root in path.parents), None)
        return path if holder == path else None

    def _host(self, root: Path) -> WorkspaceHost:
        host = self.hosts.get(root)
        if host is None:
            from agent_lsp.workspace.host import WorkspaceHost

            assert self.settings is not None
            self.process.host_built()
            # A client that relays its language servers gets them from the hand-over on
            # (`use_editor_language`); until then the agent's own servers answer.
            editor: Any = self.editor
            if self.window is not None:  # a window of the agent host: see lsp/host_window.py
                from agent_lsp.workspace.window_editor import WindowEditor

                editor = WindowEditor(self.editor, [root])
            host = WorkspaceHost(root, settings=self.settings.current, editor=editor, env=self.env,
                                 on_agent=self.agents.append,
                                 editor_language=_not_yet if _relays_language(self.params) else None,
                                 window=self.window)
            host.warm_up()
            self.hosts[root] = host
        return host

    def _send(self, message: dict[str, Any]) -> None:
        self.writer.write(frame(message))

    # ----------------------------------------------------------- hand-over

    def hand_over(self, server: Any) -> list[Any]:
        """Give the loaded server what was answered early, so that from now on it
        behaves as if it had answered it: its state from `initialize`,
        `initialized` and the settings asked for (their answers and problems are
        not sent again, the settings not asked again), the document notifications,
        and the hosts and sessions, attached to its editor and relay. The messages
        still held, which the server takes first, in order."""
        protocol = server.protocol
        if self.initialize_body is not None:
            protocol.receive(self.initialize_body)  # answered already: the writer drops pygls' answer
        if self.initialized_body is not None:
            server.pending_problems = []  # shown already
            if self.workspace_layer is not None:  # its problems were shown already
                value, source = self.workspace_layer
                server.settings.set_layer("workspace", value, source=source)
            if self.configuration == "asked":  # its answer, still to come, is the server's
                server.early_configuration = protocol.expect_response(self._configuration_id())
            elif self.configuration is not None:
                server.early_configuration = True
            protocol.receive(self.initialized_body)
        for body in self.deferred:
            protocol.receive(body)
        self.editor.target = server.editor
        for root, host in self.hosts.items():
            server.adopt_host(root, host)
        for agent in self.agents:
            server.agent_built(agent)
        # the server holds them now (and its own settings, equal to these)
        self.agents, self.hosts, self.settings, self.deferred = [], {}, None, []
        return self._end([])


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _folders(params: Mapping[str, Any]) -> list[Path] | None:
    """The workspace folders of `initialize` params, resolved, in order, as the
    server takes them (workspaceFolders, else rootUri, else rootPath); None when
    their shape is not the plain one."""
    from agent_lsp.tools.paths import file_uri_to_path

    def path_of(uri: Any) -> Path | None:
        try:
            return file_uri_to_path(uri)
        except ValueError:
            return None

    folders = params.get("workspaceFolders")
    root_uri, root_path = params.get("rootUri"), params.get("rootPath")
    if not (folders is None or isinstance(folders, list)) or not all(
            isinstance(v, (str, type(None))) for v in (root_uri, root_path)):
        return None
    paths: list[Path] = []
    for folder in folders or []:
        if not (isinstance(folder, dict) and isinstance(folder.get("uri"), str) and isinstance(folder.get("name"), str)):
            return None
        path = path_of(folder["uri"])
        if path is not None:
            paths.append(path)
    if not paths:
        root = path_of(root_uri) if root_uri else (Path(root_path) if root_path else None)
        if root is not None:
            paths.append(root)
    try:
        resolved = [path.resolve() for path in paths]
    except (OSError, ValueError):
        return None
    return list(dict.fromkeys(resolved))


def _capabilities(params: Mapping[str, Any]) -> dict[str, Any]:
    capabilities = params.get("capabilities")
    return capabilities if isinstance(capabilities, dict) else {}


def _pulls_configuration(params: Mapping[str, Any]) -> bool | None:
    """Whether the server pulls settings with `workspace/configuration` at
    `initialized`; None when the capability's shape is not the plain one."""
    workspace = _capabilities(params).get("workspace")
    if workspace is None:
        return False
    if not isinstance(workspace, dict) or not isinstance(workspace.get("configuration", False), bool):
        return None
    return bool(workspace.get("configuration"))


def _plain_agent_caps(params: Mapping[str, Any]) -> bool:
    """Whether `capabilities.experimental.agentLsp` is absent or flags only
    (then it raises no problem at `initialize`)."""
    experimental = _capabilities(params).get("experimental")
    caps = experimental.get("agentLsp") if isinstance(experimental, dict) else None
    return caps is None or (isinstance(caps, dict) and all(isinstance(v, bool) for v in caps.values()))


def _plain_session_new(params: Any) -> tuple[str | None, str | None] | None:
    """(workspaceUri, title) of agent/session/new params in their plain form:
    no params, or an object of those keys with string or null values in valid
    Unicode; None for anything else."""
    if params is None:
        return None, None
    if not isinstance(params, dict) or not SESSION_NEW_KEYS.issuperset(params):
        return None
    values = [params.get(key) for key in ("workspaceUri", "title")]
    for value in values:
        if value is not None and not isinstance(value, str):
            return None
        if isinstance(value, str) and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # an unpaired surrogate: the server says so
                return None
    return values[0], values[1]


def _relays_language(params: dict[str, Any]) -> bool:
    """The client declared `experimental.agentLsp.languageQuery`."""
    capabilities = params.get("capabilities")
    experimental = capabilities.get("experimental") if isinstance(capabilities, dict) else None
    agent = experimental.get("agentLsp") if isinstance(experimental, dict) else None
    return isinstance(agent, dict) and agent.get("languageQuery") is True


def _not_yet(settings: Any) -> None:
    return None
