"""agent/language/status: the language servers the agent runs for each folder, and why
(docs/protocol.md, "Language queries")."""

from __future__ import annotations


from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer


async def language_status(ls: AgentLanguageServer, p: wire.LanguageStatusParams) -> wire.LanguageStatusResult:
    await ls.ready()
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    servers = [wire.LanguageServerStatus(workspace_uri=host.uri, **entry)
               for host in hosts for entry in host.language_status()]
    return wire.LanguageStatusResult(servers=servers,
                                                    editor_first=ls.editor.agent_caps.language_query)


REQUESTS = {
    "agent/language/status": language_status,
}
