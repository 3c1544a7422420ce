"""The headless LSP client: drives `agent-lsp` over stdio exactly as an
editor would. It starts the server as a subprocess, declares the agent
capabilities, applies `workspace/applyEdit` to files on disk, answers
permission questions, prints the session as it streams and waits for the
agent to go idle.

All messages are handled as plain JSON (dicts with camelCase keys), the same
shapes docs/protocol.md documents, so nothing here depends on how pygls would
type them.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, Callable

from agent_lsp import __version__
from agent_lsp.cli.permission_prompt import PermissionResponder
from agent_lsp.cli.rpc_client import (
    ClientProtocol, RpcClient, answer_nothing, ignore, plain_function, plain_json_converter, subprocess_options,
)
from agent_lsp.cli.session_state import SessionState, TurnResult
from agent_lsp.cli.transcript import Transcript
from agent_lsp.cli.workspace_edit import WorkspaceEditError, apply_workspace_edit
from agent_lsp.visible import visible

log = logging.getLogger(__name__)

# A server that has not answered `initialize` by then is stuck, not slow.
START_TIMEOUT_S = 60.0
# How long `close()` waits for each step of a clean shutdown before it
# stops asking and ends the server process itself.
SHUTDOWN_TIMEOUT_S = 5.0
EXIT_TIMEOUT_S = 3.0
# If the agent reports idle but the end of our message's turn never shows
# (it should), stop waiting after this long rather than hang.
IDLE_WITHOUT_TURN_END_S = 5.0
STDERR_TAIL_LINES = 30


class ServerError(Exception):
    """The server could not be started or went away."""



def default_server_command(log_level: str = "warning") -> list[str]:
    return [sys.executable, "-m", "agent_lsp", "serve", "--stdio", "--log-level", log_level]



class HeadlessClient:
    """One server process, one workspace folder.

    ```python
    async with HeadlessClient(workspace, settings=...) as client:
        result = await client.followup("fix the bug")
    ```
    """

    def __init__(
        self,
        workspace: Path,
        *,
        settings: dict[str, Any] | None = None,
        transcript: Transcript | None = None,
        permissions: PermissionResponder | None = None,
        log_file: Path | None = None,
        log_level: str = "warning",
        show_server_log: bool = False,
        server_command: list[str] | None = None,
        env: dict[str, str] | None = None,
    ):
        self.workspace = workspace.resolve()
        self.settings = settings or {}
        self.transcript = transcript or Transcript()
        self.permissions = permissions or PermissionResponder(None, self.transcript)
        self.log_file = log_file
        self.show_server_log = show_server_log  # without a log file: copy the server's log to stderr
        self.server_command = server_command or default_server_command(log_level)
        self.env = env
        self.sessions: dict[str, SessionState] = {}
        self.last_session_id: str | None = None  # of the last followup the server answered
        self._unanswered_followup: asyncio.Future[Any] | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.server_exited = False
        self._rpc = RpcClient(protocol_cls=ClientProtocol, converter_factory=plain_json_converter)
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr_tail: collections.deque[bytes] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._log_sink: BinaryIO | None = None
        self._rpc.on_server_exit = self._wake_waiters
        self._register_handlers()

    def _wake_waiters(self) -> None:
        self.server_exited = True
        for state in self.sessions.values():
            state.changed.set()

    @property
    def workspace_uri(self) -> str:
        return self.workspace.as_uri()

    # ------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> HeadlessClient:
        try:
            await self.start()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the server and complete the initialize handshake."""
        if self.log_file is not None:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            self._log_sink = open(self.log_file, "ab")
        env = dict(os.environ if self.env is None else self.env)
        try:
            await self._rpc.start_io(*self.server_command, env=env, **subprocess_options())
        except OSError as error:
            raise ServerError(f"could not start the server ({self.server_command[0]}): {error}") from error
        process = self._rpc._server
        assert process is not None and process.stderr is not None
        self._stderr_task = asyncio.create_task(self._drain_stderr(process.stderr))
        try:
            result = await asyncio.wait_for(self.request("initialize", self._initialize_params()), START_TIMEOUT_S)
        except ServerError as error:
            raise ServerError(f"the server stopped during start-up: {error}") from error
        except asyncio.TimeoutError:
            raise ServerError(f"the server did not answer `initialize` within {START_TIMEOUT_S:g} s"
                              f"{await self._last_words()}") from None
        self.server_info = (result or {}).get("serverInfo") or {}
        self.server_capabilities = (result or {}).get("capabilities") or {}
        self._rpc.protocol.notify("initialized", {})

    async def close(self) -> None:
        """shutdown + exit; ends the process itself if it does not comply."""
        process = self._rpc._server
        if process is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.request("shutdown", None), SHUTDOWN_TIMEOUT_S)
            with contextlib.suppress(Exception):
                self._rpc.protocol.notify("exit", None)
            try:
                await asyncio.wait_for(process.wait(), EXIT_TIMEOUT_S)
            except asyncio.TimeoutError:
                log.warning("the server did not exit; terminating it")
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._rpc.stop(), EXIT_TIMEOUT_S)
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stderr_task, EXIT_TIMEOUT_S)
        if self._log_sink is not None:
            self._log_sink.close()
            self._log_sink = None

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        # Always read it: an undrained stderr pipe fills up and then blocks the
        # server at its next log line.
        sink = self._log_sink
        to_terminal = sink is None and self.show_server_log  # the log file keeps the bytes as they are
        if to_terminal:
            sink = sys.stderr.buffer
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while chunk := await stream.read(65536):
            self._stderr_tail.extend(chunk.splitlines(keepends=True))
            if sink is not None:
                sink.write(visible(decoder.decode(chunk)).encode("utf-8") if to_terminal else chunk)
                sink.flush()

    def _initialize_params(self) -> dict[str, Any]:
        return {
            "processId": os.getpid(),
            "clientInfo": {"name": "agent-lsp (headless)", "version": __version__},
            "rootUri": self.workspace_uri,
            "rootPath": str(self.workspace),
            "workspaceFolders": [{"uri": self.workspace_uri, "name": self.workspace.name}],
            "initializationOptions": self.settings,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "workspace": {
                    "applyEdit": True,
                    "workspaceEdit": {
                        "documentChanges": True,
                        "resourceOperations": ["create", "rename", "delete"],
                        "failureHandling": "abort",
                    },
                    "workspaceFolders": True,
                },
                "window": {"showMessage": {}},
                "experimental": {"agentLsp": {"permissions": True, "saveDocuments": True, "events": True}},
            },
        }

    # ------------------------------------------------------------ requests

    async def request(self, method: str, params: Any) -> Any:
        try:
            return await self._rpc.protocol.send_request_async(method, params)
        except RuntimeError as error:  # pygls fails pending requests: "Server process ... exited"
            process = self._rpc._server
            if process is not None and process.returncode is not None:
                raise ServerError(f"{error}{await self._last_words()}") from error
            raise

    async def _last_words(self) -> str:
        """The server's last log lines, to explain why it stopped."""
        if self._stderr_task is not None:  # let the drain read what is left in the pipe
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        text = b"".join(self._stderr_tail).decode("utf-8", errors="replace").rstrip()
        return f"\n--- the server's last output ---\n{text}" if text else ""

    async def settle_followup(self, timeout: float) -> None:
        """After a cancel that came before the last followup's answer: wait for that
        answer (at most `timeout`) so `last_session_id` names the session it made."""
        pending, self._unanswered_followup = self._unanswered_followup, None
        if pending is None:
            return
        try:
            answer = await asyncio.wait_for(asyncio.shield(pending), timeout)
        except Exception:  # noqa: BLE001 - no answer: no session to name
            return
        self.last_session_id = answer["sessionId"]

    def notify(self, method: str, params: Any) -> None:
        self._rpc.protocol.notify(method, params)

    def session(self, session_id: str) -> SessionState:
        return self.sessions.setdefault(session_id, SessionState())

    async def followup(
        self,
        content: str | list[dict[str, Any]],
        *,
        session_id: str | None = None,
        context: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> TurnResult:
        """Send a message and wait until the agent is idle again (the turn and
        anything it queued have finished)."""
        params: dict[str, Any] = {"content": content, "workspaceUri": self.workspace_uri}
        if session_id:
            params["sessionId"] = session_id
        if context:
            params["context"] = context
        text_before = len(self.transcript.text)
        # Shielded: a Ctrl-C before the answer still learns the session (`settle_followup`).
        self._unanswered_followup = asyncio.ensure_future(self.request("agent/followup", params))
        answer = await asyncio.shield(self._unanswered_followup)
        self._unanswered_followup = None
        sid, message_id = answer["sessionId"], answer["messageId"]
        self.last_session_id = sid
        await asyncio.wait_for(self._wait_until_finished(sid, message_id), timeout)
        self.transcript.flush_notes()
        state = self.session(sid)
        return TurnResult(
            session_id=sid,
            message_id=message_id,
            reason=state.turn_end_reasons.get(state.claimed.get(message_id, -1)),
            text=self.transcript.text[text_before:],
        )

    async def _wait_until_finished(self, session_id: str, message_id: str) -> None:
        state = self.session(session_id)
        while True:
            if state.finished(message_id):
                return
            if self.server_exited:
                raise ServerError(f"the server exited during the turn{await self._last_words()}")
            state.changed.clear()
            waiting_on_turn_end = state.status == "idle"
            try:
                await asyncio.wait_for(
                    state.changed.wait(), IDLE_WITHOUT_TURN_END_S if waiting_on_turn_end else None
                )
            except asyncio.TimeoutError:
                log.warning("session %s went idle without ending the turn of %s", session_id, message_id)
                return

    async def cancel(self, session_id: str, *, keep_inbox: bool = False) -> None:
        await self.request("agent/cancel", {"sessionId": session_id, "keepInbox": keep_inbox})

    # ------------------------------------------------ server -> client messages

    def _register_handlers(self) -> None:
        def feature(method: str) -> Callable[[Callable[..., Any]], Any]:
            return lambda handler: self._rpc.feature(method)(plain_function(handler))

        feature("session/event")(self._on_session_event)
        feature("agent/status")(self._on_status)
        feature("agent/error")(self._on_agent_error)
        feature("agent/inbox/claimed")(self._on_inbox_claimed)
        feature("agent/inbox/discarded")(self._on_inbox_discarded)
        feature("agent/tool/progress")(self._on_tool_progress)
        feature("workspace/applyEdit")(self._on_apply_edit)
        feature("agent/permission")(self._on_permission)
        feature("agent/saveDocuments")(self._on_save_documents)
        feature("window/showMessage")(self._on_show_message)
        feature("window/showMessageRequest")(self._on_show_message_request)
        feature("window/logMessage")(self._on_log_message)
        feature("window/workDoneProgress/create")(answer_nothing)
        feature("client/registerCapability")(answer_nothing)
        feature("client/unregisterCapability")(answer_nothing)
        feature("workspace/configuration")(self._on_configuration)
        feature("workspace/workspaceFolders")(self._on_workspace_folders)
        for ignored in ("$/progress", "textDocument/publishDiagnostics", "telemetry/event",
                        "agent/inbox/inserted", "$/logTrace"):
            feature(ignored)(ignore)

    def _on_session_event(self, params: dict[str, Any]) -> None:
        state = self.session(params["sessionId"])
        for event in params.get("events") or []:
            seq = event.get("seq", -1)
            if seq <= state.last_seq:
                continue  # already shown (a replay overlapping what we saw live)
            # A coalesced chunk stands for the events seq..lastSeq.
            state.last_seq = max(seq, event.get("lastSeq") or seq)
            self.transcript.event(event)
            if event.get("type") == "turn/end":
                data = event.get("data") or {}
                state.turn_end_reasons[data.get("turn", -1)] = data.get("reason")
        state.changed.set()

    def _on_status(self, params: dict[str, Any]) -> None:
        state = self.session(params["sessionId"])
        state.status = params.get("status")
        state.changed.set()

    def _on_inbox_claimed(self, params: dict[str, Any]) -> None:
        state = self.session(params["sessionId"])
        state.claimed[(params.get("message") or {}).get("id", "")] = params.get("turn", -1)
        state.changed.set()

    def _on_inbox_discarded(self, params: dict[str, Any]) -> None:
        state = self.session(params["sessionId"])
        state.discarded.add((params.get("message") or {}).get("id", ""))
        state.changed.set()

    def _on_agent_error(self, params: dict[str, Any]) -> None:
        self.transcript.agent_error(params)

    def _on_tool_progress(self, params: dict[str, Any]) -> None:
        data = params.get("data") or {}
        if isinstance(data.get("text"), str):
            self.transcript.tool_output(data["text"], params.get("callId"))

    def _on_apply_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            applied = apply_workspace_edit(params.get("edit") or {})
        except WorkspaceEditError as error:
            self.transcript.error(f"could not apply the agent's edit: {error}")
            return {
                "applied": False,
                "failureReason": str(error),
                "failedChange": getattr(error, "failed_change", 0),
            }
        self.transcript.edit_applied(applied.changed + applied.deleted, self.workspace)
        return {"applied": True}

    async def _on_permission(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"answer": await self.permissions.answer(params)}

    def _on_save_documents(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}  # no buffers here: every edit already went to disk

    def _on_show_message(self, params: dict[str, Any]) -> None:
        message = params.get("message", "")
        kind = params.get("type", 3)
        if kind == 1:
            self.transcript.error(message)
        elif kind == 2:
            self.transcript.warn(message)
        else:
            self.transcript.info(message)

    async def _on_show_message_request(self, params: dict[str, Any]) -> dict[str, Any] | None:
        return await self.permissions.choose_action(params)

    def _on_log_message(self, params: dict[str, Any]) -> None:
        log.debug("server: %s", params.get("message", ""))

    def _on_configuration(self, params: dict[str, Any]) -> list[Any]:
        return [self.settings if item.get("section") in (None, "agentLsp") else None
                for item in params.get("items") or []]

    def _on_workspace_folders(self, params: Any) -> list[dict[str, str]]:
        return [{"uri": self.workspace_uri, "name": self.workspace.name}]
