"""Stdio MCP servers in the commands' sandbox (`mcp.sandbox`, docs/sandbox.md).

With `mcp.sandbox = "auto"` a stdio server the server starts runs in the
sandbox the agent's commands run in (the `shell` settings: the workspace
writable, the home hidden but the toolchains, no secret, no Unix socket, the
network off but `shell.allowedDomains`), where one works; a server whose
command is a sandbox exception (`shell.sandboxExceptions`) runs outside.
"require": a server is not started unsandboxed. "off" (the default): servers
run as the user, as before: many start through `npx`/`uvx`, whose caches and
whose servers' own settings live in the home the sandbox hides.

The launcher (launcher.py) still sits outside, between the language server
and the sandbox, so the server dies with the language server as before.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from agent_lsp.mcp.config import ServerConfig
from agent_lsp.sandbox import Placement, SandboxPolicy


def sandboxed_command(config: ServerConfig, cwd: Path,
                      sandbox: SandboxPolicy | None) -> tuple[list[str], Placement | None]:
    """The server's command line where `sandbox` puts it, and the placement (None:
    no sandbox asked for). A placement with `refused` set: the server must not start."""
    argv = [config.command or "", *config.args]
    if sandbox is None:
        return argv, None
    placement = sandbox.place(shlex.join(argv))
    if placement.refused:
        return argv, placement
    return placement.wrap(argv, cwd), placement
