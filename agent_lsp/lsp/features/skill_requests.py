"""agent/skill/list and agent/skill/run (also the `agentLsp.runSkill` command):
the skills of the workspace folders, and a skill invoked by the user
(see docs/capabilities.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import capabilities
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.lsp.messages import message_ref
from agent_lsp.lsp.rpc import parse
from agent_lsp.service import Message
from agent_lsp.service.capability_refresh import refresh

if TYPE_CHECKING:
    from agent_lsp.service import Queued


async def skill_list_request(ls: AgentLanguageServer, p: wire.SkillListParams) -> wire.SkillListResult:
    await ls.ready()
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    for host in hosts:
        refresh(host)
    skills = [
        wire.SkillInfo(workspace_uri=host.uri, name=skill.name, description=skill.description,
                       source=skill.source, path=str(skill.path))
        for host in hosts for skill in host.skills().values()
    ]
    return wire.SkillListResult(skills=skills)


async def skill_run_request(ls: AgentLanguageServer, p: wire.SkillRunParams) -> wire.MessageRef:
    await ls.ready()
    return message_ref(await run_skill(ls, p))


REQUESTS = {
    "agent/skill/list": skill_list_request,
    "agent/skill/run": skill_run_request,
}


def register(server: AgentLanguageServer) -> None:
    @server.command(capabilities.RUN_SKILL)
    async def cmd_run_skill(ls: AgentLanguageServer, *args: Any) -> dict:
        if len(args) != 1:
            raise JsonRpcInvalidParams("arguments: expected one argument, the skill's name or {name, arguments?, sessionId?}")
        value = {"name": args[0]} if isinstance(args[0], str) else args[0]
        p = parse(wire.SkillRunParams, value)
        await ls.ready()
        queued = await run_skill(ls, p, use_current=True)
        ls.command_sessions.add(queued.session_id)
        return wire.wire_dump(message_ref(queued))


async def run_skill(ls: AgentLanguageServer, p: wire.SkillRunParams, *, use_current: bool = False) -> Queued:
    from agent_lsp.tools.base import ToolError  # with the agent machinery, not at server start
    from agent_lsp.tools.skills import invocation_text

    host = ls.service.turn_host(p.session_id or None, p.workspace_uri)  # the skills as they are now
    skill = host.skills().get(p.name)
    if skill is None:
        known = ", ".join(host.skills()) or "none"
        raise JsonRpcInvalidParams(f"name: no skill named {p.name!r} in {host.root} (skills: {known})")
    try:
        text = invocation_text(skill, p.arguments)
    except ToolError as error:  # the file changed since it was listed
        raise JsonRpcInvalidParams(f"name: skill {p.name!r}: {error.message}") from None
    shown = f"/{skill.name}" + (f" {p.arguments.strip()}" if p.arguments and p.arguments.strip() else "")
    return await ls.service.followup(Message(text, note={"kind": "skill", "text": shown}), session_id=p.session_id or None, workspace_uri=p.workspace_uri,
                                     use_current=use_current, mentions=False)
