"""Answering the agent's permission questions (`agent/permission`) in the
headless client: from a command-line flag, by asking at the terminal, or
"deny" when nobody can be asked (stdin is not a terminal)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from agent_lsp.cli.attention import Bell
from agent_lsp.cli.terminal_input import LineReader
from agent_lsp.cli.transcript import Transcript

PermissionMode = Literal["allow", "deny", "ask"]

_ANSWERS = {"y": "once", "yes": "once", "s": "session", "a": "always", "n": "deny", "no": "deny", "": "deny"}


class PermissionResponder:
    """`mode` "allow" answers every question "once" (no lasting grant),
    "deny" refuses, "ask" asks at the terminal. None picks "ask" when stdin is
    a terminal and "deny" otherwise."""

    def __init__(
        self,
        mode: PermissionMode | None,
        transcript: Transcript,
        lines: LineReader | None = None,
        bell: Bell | None = None,
    ):
        self.bell = bell
        self.lines = lines or LineReader()
        if mode is None:
            mode = "ask" if self.lines.isatty() else "deny"
        self.mode: PermissionMode = mode
        self.transcript = transcript
        self._one_at_a_time = asyncio.Lock()

    async def answer(self, request: dict[str, Any]) -> str:
        title = str(request.get("title") or request.get("tool") or "a tool call")
        if self.mode == "allow":
            self.transcript.note(f"  allowed: {title}")
            return "once"
        if self.mode == "deny":
            self.transcript.warn(f"denied: {title} (run with --yes to allow, or from a terminal to be asked)")
            return "deny"
        async with self._one_at_a_time:
            return await self._ask(title, request)

    async def _ask(self, title: str, request: dict[str, Any]) -> str:
        lines = [f"The agent asks permission: {title}"]
        detail = request.get("detail") or request.get("command")
        if detail and detail != title:
            lines.append(f"    {detail}")
        lines.append("Allow? [y] once, [s] for this session, [a] always, [N] deny: ")
        prompt = "\n".join(lines)
        if self.bell is not None:
            self.bell.ring()  # a question waits, whatever the turn's length
        while True:
            self.transcript.err.write(self.transcript.visible(prompt))
            self.transcript.err.flush()
            reply = await self.lines.readline()
            if not reply:  # end of input: nobody will answer
                return "deny"
            answer = _ANSWERS.get(reply.strip().lower())
            if answer is not None:
                return answer
            prompt = "Please answer y, s, a or n: "

    async def choose_action(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """`window/showMessageRequest`, the generic-editor fallback: pick the
        action that means our answer ("Allow once", ..., "Deny")."""
        actions = params.get("actions") or []
        titles = [a.get("title", "") for a in actions if isinstance(a, dict)]
        if not titles:
            self.transcript.info(params.get("message", ""))
            return None
        wanted = {"once": "allow once", "session": "allow for session", "always": "always allow", "deny": "deny"}
        answer = await self.answer({"title": params.get("message", "")})
        for action in actions:
            if action.get("title", "").strip().lower() == wanted[answer]:
                return action
        # Not a permission question we know: never agree to something unknown.
        for action in actions:
            if "deny" in action.get("title", "").lower() or "cancel" in action.get("title", "").lower():
                return action
        return None
