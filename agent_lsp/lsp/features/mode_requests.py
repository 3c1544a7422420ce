"""agent/session/mode: switch a session's permission mode (`default` or
`plan`); the change is recorded in the session log (`session/mode`) and the
model is told at its next step (`agent_lsp.workspace.session_modes`)."""

from __future__ import annotations


from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer


async def session_mode(ls: AgentLanguageServer, p: wire.SessionModeParams) -> wire.SessionModeResult:
    await ls.ready()
    host, agent = ls.agent_for(p.session_id)
    changed = host.modes.set_mode(agent, p.mode, carry_plan=p.carry_plan)
    return wire.SessionModeResult(mode=changed["mode"], previous=changed["previous"])


REQUESTS = {
    "agent/session/mode": session_mode,
}
