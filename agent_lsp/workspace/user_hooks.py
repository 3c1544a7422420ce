"""User hooks on the agent's hook bus: each lifecycle point runs the matching commands.

    PreToolUse        tools/pre-execute      block: the call is denied, the reason is its tool result
    PostToolUse       tools/post-execute     block or additionalContext: the text reaches the model next step
    UserPromptSubmit  agent/pre-step         block: the turn ends unanswered ("blocked", with the reason);
                                             additionalContext (or plain stdout): entered with the prompt
    Stop              agent/turn-stopping    block: the reason is entered and the turn goes on
                                             (at most MAX_STOP_CONTINUATIONS times a turn)
    SessionStart      agent/pre-step         once per loaded session; additionalContext (or plain stdout)
                      (its first step)       is entered before the first prompt

Each command gets a JSON object on stdin (Claude Code's field names:
`session_id`, `transcript_path`, `cwd`, `hook_event_name`, plus `tool_name`,
`tool_input`, `tool_use_id`, `tool_response`, `prompt`, `stop_hook_active` or
`source` by event). Matching commands of one point run in parallel.

Hooks from a project file ask once (a permission question, tool
`project_hooks`, naming the file and a digest of its hooks: an "always" answer
is remembered for the workspace until the hooks change). Until trusted they do
not run. Every hook that ran is recorded in the session log (`hook/run`, for
clients; the model does not see it): one that allowed, blocked, failed or
timed out. A failing or timed-out hook leaves the turn going on as if it were
not configured.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Callable, Iterable

from pydantic import BaseModel

from agent_lsp.agent import Agent
from agent_lsp.agent.inbox import make_message
from agent_lsp.agent.ports import Editor, PermissionRequest, ToolOutput, one_line
from agent_lsp.tools.base import PermissionGate
from agent_lsp.sandbox import SandboxPolicy
from agent_lsp.tools.command_env import CommandEnvPolicy
from agent_lsp.workspace.hook_config import HookCommand
from agent_lsp.workspace.hook_runner import HookAnswer, run_hook_command

log = logging.getLogger(__name__)

TRUST_TOOL = "project_hooks"  # the tool name of the trust question in permission rules
HOOK_EVENT = "hook/run"  # the durable record of a hook that ran (allowed, blocked, failed, timed out)
HOOK_SOURCE = "hook"  # the source of the messages hooks enter
MAX_STOP_CONTINUATIONS = 5


class UserHooks:
    """The hooks of one workspace; `attach(agent)` puts them on an agent's bus."""

    def __init__(
        self,
        commands: Iterable[HookCommand],
        *,
        root: Path,
        editor: Editor | None,
        policy: PermissionGate | None,
        transcript_of: Callable[[str], Path],
        env_policy: CommandEnvPolicy = CommandEnvPolicy(),
        sandbox: SandboxPolicy | None = None,
    ):
        self.commands = list(commands)
        self.root = root
        self.editor = editor
        self.policy = policy
        self.transcript_of = transcript_of
        self.env_policy = env_policy
        self.sandbox = sandbox  # hooks run in the commands' sandbox
        self._trust: dict[str, asyncio.Future[bool]] = {}  # project file -> trusted

    def __bool__(self) -> bool:
        return bool(self.commands)

    def attach(self, agent: Agent) -> None:
        if not self.commands:
            return
        _AgentHooks(self, agent).register()

    def matching(self, event: str, tool_name: str | None = None) -> list[HookCommand]:
        return [c for c in self.commands if c.event == event and c.matches(tool_name)]

    async def trusted(self, agent: Agent, origin: str) -> bool:
        """Whether the user trusts the hooks of project file `origin` (asked once per workspace host)."""
        pending = self._trust.get(origin)
        if pending is None:
            pending = self._trust[origin] = asyncio.ensure_future(self._ask_trust(agent, origin))
        return await asyncio.shield(pending)

    async def _ask_trust(self, agent: Agent, origin: str) -> bool:
        if self.policy is None or self.editor is None:
            return False
        commands = [c for c in self.commands if c.origin == origin]
        digest = hashlib.sha256(
            json.dumps([[c.event, c.matcher, c.command, c.timeout_s] for c in commands]).encode("utf-8")
        ).hexdigest()[:16]
        # one line per command: a line break inside one does not pass for another command
        shown = "\n".join(f"{c.event}{f' ({c.matcher})' if c.matcher else ''}: {one_line(c.command)}" for c in commands)
        request = PermissionRequest(
            tool=TRUST_TOOL,
            title=f"Run the hooks of {origin} in {self.root.name}?",
            kind="command",
            detail=f"The workspace's {origin} asks to run these commands on agent events:\n{shown}",
            command=f"{origin} {digest}",
            session_id=agent.session_id,
        )
        verdict = await self.policy.authorize(self.editor, request)
        if not verdict.allowed:
            log.warning("hooks of %s not trusted: %s", origin, verdict.reason)
        return verdict.allowed


class _AgentHooks:
    """The listeners of one agent (they know its session and what they did this turn)."""

    def __init__(self, hooks: UserHooks, agent: Agent):
        self.hooks = hooks
        self.agent = agent
        self.session_started = False
        self.continuations: dict[int, int] = {}  # turn -> Stop hooks that continued it

    def register(self) -> None:
        bus = self.agent.hooks
        bus.register("tools/pre-execute", self.pre_tool)
        bus.register("tools/post-execute", self.post_tool)
        bus.register("agent/pre-step", self.pre_step)
        bus.register("agent/turn-stopping", self.stopping)

    # ------------------------------------------------------------ points

    async def pre_tool(self, payload: dict[str, Any], next_: Callable) -> Any:
        name = payload["name"]
        answers = await self.run("PreToolUse", name, {
            "tool_name": name, "tool_input": _json_args(payload.get("arguments")), "tool_use_id": payload.get("callId"),
        })
        for command, answer in answers:
            if answer.blocks:
                return {"kind": "deny", "reason": f"a PreToolUse hook ({command.command}) blocked it: {answer.reason}"}
        return await next_()

    async def post_tool(self, payload: dict[str, Any], next_: Callable) -> Any:
        decision = await next_()
        output = payload.get("output")
        name = payload["name"]
        answers = await self.run("PostToolUse", name, {
            "tool_name": name, "tool_input": _json_args(payload.get("arguments")), "tool_use_id": payload.get("callId"),
            "tool_response": _output_text(output),
        })
        contexts = []
        for command, answer in answers:
            if answer.blocks:
                contexts.append(f"PostToolUse hook ({command.command}) on {name}: {answer.reason}")
            elif answer.additional_context:
                contexts.append(answer.additional_context)
        if not contexts:
            return decision
        if isinstance(decision, ToolOutput):
            return {"kind": "accept", "output": decision, "additionalContexts": contexts}
        if isinstance(decision, dict) and decision.get("kind", "accept") == "accept":
            return {**decision, "additionalContexts": [*(decision.get("additionalContexts") or ()), *contexts]}
        return decision

    async def pre_step(self, payload: dict[str, Any], next_: Callable) -> Any:
        messages = list(payload["messages"])
        entered: list[dict[str, Any]] = []
        if not self.session_started:
            self.session_started = True
            resumed = any(e.type == "turn/end" for e in self.agent.session.events)
            for _, answer in await self.run("SessionStart", None, {"source": "resume" if resumed else "startup"}):
                if text := _context_of(answer):
                    entered.append(make_message(f"SessionStart hook context:\n{text}", source=HOOK_SOURCE))
        prompt = "\n".join(_message_text(m) for m in messages if m.get("source", "user") == "user")
        if prompt:
            for command, answer in await self.run("UserPromptSubmit", None, {"prompt": prompt}):
                if answer.blocks:
                    return {"kind": "reject", "reason": f"a UserPromptSubmit hook ({command.command}) blocked the prompt: {answer.reason}"}
                if text := _context_of(answer):
                    entered.append(make_message(f"UserPromptSubmit hook context:\n{text}", source=HOOK_SOURCE))
        if not entered:
            return await next_()
        return await next_({**payload, "messages": messages + entered})

    async def stopping(self, payload: dict[str, Any]) -> None:
        turn = payload["turn"]
        done = self.continuations.get(turn, 0)
        answers = await self.run("Stop", None, {"stop_hook_active": done > 0})
        reasons = [f"Stop hook ({command.command}): {answer.reason}" for command, answer in answers if answer.blocks]
        if not reasons:
            return
        if done >= MAX_STOP_CONTINUATIONS:
            self.record("Stop", answers[0][0], "failed",
                        f"asked to continue turn {turn} again after {done} times; the turn ends")
            return
        self.continuations[turn] = done + 1
        self.agent.inject("\n".join(reasons), source=HOOK_SOURCE)

    # ----------------------------------------------------------- running

    async def run(self, event: str, tool_name: str | None, fields: dict[str, Any]) -> list[tuple[HookCommand, HookAnswer]]:
        """Run the matching (and trusted) commands in parallel; the answers of those that ran."""
        commands = self.hooks.matching(event, tool_name)
        if not commands:
            return []
        runnable = []
        for command in commands:
            if command.is_project and not await self.hooks.trusted(self.agent, command.origin):
                continue
            runnable.append(command)
        session_id = self.agent.session_id
        payload = {
            "session_id": session_id,
            "transcript_path": str(self.hooks.transcript_of(session_id)),
            "cwd": str(self.hooks.root),
            "hook_event_name": event,
            **fields,
        }
        answers = await asyncio.gather(*(
            run_hook_command(c.command, payload, cwd=self.hooks.root, timeout_s=c.timeout_s, env_policy=self.hooks.env_policy,
                             sandbox=self.hooks.sandbox)
            for c in runnable
        ))
        for command, answer in zip(runnable, answers):
            if answer.outcome in ("failed", "timeout"):
                log.warning("%s hook %r %s", event, command.command, answer.message)
                self.record(event, command, answer.outcome, answer.message, answer.exit_code)
            elif answer.blocks:
                self.record(event, command, "blocked", answer.reason, answer.exit_code)
            else:  # recorded too: clients show every hook that ran, so the user sees what runs
                self.record(event, command, "allowed", "", answer.exit_code)
        return list(zip(runnable, answers))

    def record(self, event: str, command: HookCommand, outcome: str, message: str, exit_code: int | None = None) -> None:
        data: dict[str, Any] = {"event": event, "command": command.command, "source": command.source,
                                "origin": command.origin, "outcome": outcome, "message": message}
        if exit_code is not None:
            data["exitCode"] = exit_code
        session = self.agent.session
        if not session.closed:
            session.append(HOOK_EVENT, data)


def _json_args(arguments: Any) -> Any:
    if isinstance(arguments, BaseModel):
        return arguments.model_dump(mode="json", by_alias=True, exclude_none=True)
    return arguments


def _output_text(output: Any) -> Any:
    if isinstance(output, ToolOutput):
        content = output.content
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content if isinstance(b, dict))
        return {"content": text, "isError": bool(output.is_error)}
    return output


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text")


def _context_of(answer: HookAnswer) -> str:
    """What a prompt or session hook adds: its JSON `additionalContext`, or its plain stdout."""
    if answer.outcome != "ok":
        return ""
    if answer.output:
        return answer.additional_context
    return answer.stdout.strip()
