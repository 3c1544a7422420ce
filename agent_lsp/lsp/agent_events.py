"""Agent -> client: each agent's events become notifications.

One subscription to the agent's stream: durable session events go through
the relay (`session/event`), live events (`agent/status`, `agent/inbox/*`,
`agent/error`, `agent/tool/progress`) as the notification of the same name
with `{sessionId, **data}`; a running session shows `$/progress`, and the end of a turn
started by `workspace/executeCommand` is shown with `window/showMessage`.

The custom notifications go only to a client that declared
`experimental.agentLsp.events`; it renders them, so the answer of a
command's turn is not repeated with showMessage (a failure still is). Any
other client gets the conversation as `window/logMessage` lines
(lsp/plain_transcript.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agent_lsp.agent.events import CLIENT_LIVE_EVENTS, AgentEvent
from agent_lsp.llm.types import message_text
from agent_lsp.lsp.plain_transcript import transcript_line
from agent_lsp.store.session import Event

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.lsp.language_server import AgentLanguageServer

SHOW_MESSAGE_LIMIT = 2000  # characters of the final answer shown by window/showMessage


class AgentEvents:
    def __init__(self, ls: AgentLanguageServer):
        self.ls = ls
        self._relayed: dict[str, int] = {}  # session id -> the next seq the client has not been sent

    def attach(self, agent: Agent) -> None:
        """Stream a new agent's events to the client: one subscription, each
        event sent as it comes (payloads are complete at the source)."""
        sid = agent.session_id
        ls = self.ls
        relay = ls.relay
        relayed = self._relayed
        # An agent rebuilt for a session this client already follows (new settings)
        # starts from a fresh load, which may have appended events (session/end-seed):
        # send what the client has not seen, so every seq reaches it once.
        if sid in relayed:
            for event in agent.session.events[relayed[sid]:]:
                relay.durable(sid, event)

        def send(event: AgentEvent) -> None:
            kind = event.type
            if event.__class__ is Event:  # the hot path: every chunk
                relayed[sid] = event.seq + 1  # type: ignore[union-attr]
                relay.durable(sid, event)
                if kind == "tool/call":
                    ls.progress.report(sid, event.data.get("name", "tool"))
            elif kind == "agent/tool/progress":
                relay.tool_progress(sid, event.data["callId"], event.data["data"])
            elif kind == "agent/status":
                self._on_status(agent, event.data["status"])
            elif kind in CLIENT_LIVE_EVENTS:
                relay.live(sid, kind, event.data)

        agent.subscribe(send if ls.editor.agent_caps.events else self._plain(agent))

    def _plain(self, agent: Agent):
        """The subscriber for a client that does not render events: log lines, progress, status."""
        ls = self.ls

        def send(event: AgentEvent) -> None:
            kind = event.type
            if event.__class__ is Event:
                if kind == "tool/call":
                    ls.progress.report(agent.session_id, event.data.get("name", "tool"))
                line = transcript_line(kind, event.data)
                if line:
                    ls.log_line(line)
            elif kind == "agent/status":
                self._on_status(agent, event.data["status"])

        return send

    def _on_status(self, agent: Agent, status: str) -> None:
        ls = self.ls
        sid = agent.session_id
        renders_events = ls.editor.agent_caps.events
        if renders_events:
            ls.relay.live(sid, "agent/status", {"status": status})
        if status == "running":
            ls.progress.running(sid, "agent-lsp: working", lambda: agent.cancel("user"))
            return
        ls.progress.idle(sid)
        if sid in ls.command_sessions:
            ls.command_sessions.discard(sid)
            kind, text = self._turn_outcome(agent)
            # A client that renders events shows the answer itself; a failure is still said.
            if text and (not renders_events or kind == types.MessageType.Error):
                ls.show(text[:SHOW_MESSAGE_LIMIT], kind)

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
