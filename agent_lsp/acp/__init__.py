"""The ACP face: agent_lsp's agent for Agent Client Protocol clients (Zed, JetBrains, ...).

At the rank of the LSP face: it drives the same workspace hosts, agents,
tools and session store; the `acp` package (agent-client-protocol) speaks
the protocol. See docs/acp.md.
"""

from agent_lsp.acp.quick_import import import_acp

import_acp()  # before any module of this package imports `acp` (acp/quick_import.py)
