"""Capability files read again when a turn starts.

Skills, rules, agent types, project hooks and `.mcp.json` are read once by a
folder's host and kept; `WorkspaceHost.refresh_capabilities` compares their
files with what it read (a few `stat` calls) and reads again what changed.
The service runs it before every message that may start a turn, on both
faces, so a skill added between two prompts is there for the second; the LSP
face also runs it when the client reports changed files and before the skill
and MCP lists are answered.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_lsp.workspace.host import WorkspaceHost

log = logging.getLogger(__name__)


def refresh(host: WorkspaceHost) -> None:
    """Re-read what changed of the folder's capability files; a problem is logged, never raised
    (a followup must not fail because a skill folder is unreadable)."""
    try:
        host.refresh_capabilities()
    except Exception:
        log.exception("re-reading the capability files of %s", host.root)
