"""Agent -> client: each agent's events become notifications.

Durable session events go through the relay (`session/event`), live events
(`agent/status`, `agent/inbox/*`, `agent/error`, tool progress) as their own
notifications; a running session shows `$/progress`, and the end of a turn
started by `workspace/executeCommand` is shown with `window/showMessage`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agent_lsp.llm.types import message_text

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.lsp.language_server import AgentLanguageServer

SHOW_MESSAGE_LIMIT = 2000  # characters of the final answer shown by window/showMessage


class AgentEvents:
    def __init__(self, ls: AgentLanguageServer):
        self.ls = ls
        self._relayed: dict[str, int] = {}  # session id -> the next seq the client has not been sent

    def attach(self, agent: Agent) -> None:
        """Stream a new agent's events to the client."""
        sid = agent.session_id
        relay = self.ls.relay
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
            self.ls.progress.report(session_id, f"{event.data.get('name', 'tool')}")

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
        ls = self.ls
        sid, status = agent.session_id, payload["status"]
        ls.relay.live(sid, "agent/status", {"status": status})
        if status == "running":
            ls.progress.running(sid, "agent-lsp: working", lambda: agent.cancel("user"))
            return
        ls.progress.idle(sid)
        if sid in ls.command_sessions:
            ls.command_sessions.discard(sid)
            kind, text = self._turn_outcome(agent)
            if text:
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
