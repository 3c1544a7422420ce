"""agent/permission/rules and agent/permission/revoke: the permission rules in
force per workspace and where each comes from, and forgetting a remembered
one (an "Always allow" or "Allow for session" answer); see docs/protocol.md,
"Permission rules"."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer


async def permission_rules_request(ls: AgentLanguageServer, p: wire.PermissionRulesParams) -> wire.PermissionRulesResult:
    await ls.ready()
    hosts = [ls.host_for_uri(p.workspace_uri)] if p.workspace_uri else ls.hosts
    return wire.PermissionRulesResult(rules=[rule for host in hosts for rule in _rules_of(host)])


async def permission_revoke_request(ls: AgentLanguageServer, p: wire.PermissionRevokeParams) -> wire.PermissionRulesResult:
    await ls.ready()
    host = ls.host_for_uri(p.workspace_uri)
    try:
        host.policy.revoke(p.id)
    except KeyError:
        raise JsonRpcInvalidParams(f"id: no permission rule {p.id!r} in {host.root} (list them with agent/permission/rules)") from None
    except ValueError as error:
        raise JsonRpcInvalidParams(f"id: {error}") from None
    return wire.PermissionRulesResult(rules=_rules_of(host))


def _rules_of(host: Any) -> list[wire.PermissionRuleInfo]:
    return [
        wire.PermissionRuleInfo(
            id=entry.id, workspace_uri=host.uri, tool=entry.rule.tool, action=entry.rule.action,
            command_prefix=entry.rule.command_prefix, path_glob=entry.rule.path_glob, scope=entry.scope,
            source=entry.source, session_id=entry.session_id, revocable=entry.revocable,
        )
        for entry in host.policy.listed_rules()
    ]


REQUESTS = {
    "agent/permission/rules": permission_rules_request,
    "agent/permission/revoke": permission_revoke_request,
}
