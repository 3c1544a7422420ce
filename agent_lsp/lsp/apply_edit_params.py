"""`workspace/applyEdit` params with our `agentLsp` member.

Every agent edit tells the client the folder's effective `edits.review`
setting (`wire.ApplyEditAgentLsp`), however it was set (config.toml, the
environment, initializationOptions, workspace/configuration), so
a plugin that saves edited buffers itself leaves them unsaved in review mode
without a copy of the setting of its own. lsprotocol's params class has no
room for an extension member, so this subclass carries it and the converter
hook adds it to the JSON. Only clients that declared
`experimental.agentLsp.saveDocuments` get it: eglot refuses a
`workspace/applyEdit` with a member it does not know.
"""

from __future__ import annotations

from typing import Any

import attrs
from lsprotocol import types


@attrs.define
class AgentApplyEditParams(types.ApplyWorkspaceEditParams):
    agent_lsp: dict[str, Any] | None = None  # wire.ApplyEditAgentLsp, dumped


def register_agent_member(converter: Any) -> None:
    """Make `converter` write `agentLsp` for AgentApplyEditParams."""
    standard = converter.get_unstructure_hook(types.ApplyWorkspaceEditParams)

    def unstructure(params: types.ApplyWorkspaceEditParams) -> dict[str, Any]:
        data = standard(params)
        member = getattr(params, "agent_lsp", None)
        if member is not None:
            data["agentLsp"] = member
        return data

    converter.register_unstructure_hook(types.ApplyWorkspaceEditParams, unstructure)
