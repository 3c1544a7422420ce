"""The folder's part of the fixed prompt, sent as a hidden first message.

A request starts with what is the same in every folder (the system prompt,
then the tool schemas), then the folder's own part (its roots and project
instructions), then the conversation: a model server shared by several
projects finds the system prompt and the tools of each in its prompt cache.
The folder's part comes from the `system-prompt/assemble` point (its
`workspace` key, set by the host); it is not a message of the session's log
(clients never show it, compaction never drops it), and the step's
`request/header` records it beside the system prompt. Compaction counts it
in the fixed prompt.
"""

from __future__ import annotations

from typing import Any, Mapping

WORKSPACE_SOURCE = "workspace"


def envelope_text(source: Mapping[str, Any]) -> str:
    """The fixed prompt's text of an assembly or request header: the system prompt
    and the folder's part."""
    system, workspace = str(source.get("system") or ""), str(source.get("workspace") or "")
    return f"{system}\n\n{workspace}" if workspace else system


def leading_messages(assembly: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The hidden message(s) every request of the step starts its conversation with."""
    workspace = assembly.get("workspace")
    if not workspace:
        return ()
    return ({"role": "user", "content": [{"type": "text", "text": str(workspace)}], "source": WORKSPACE_SOURCE},)
