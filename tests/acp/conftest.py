"""tests/acp drives `agent-lsp acp`; the cross-face tests use the LSP harness too, the MCP tests its HTTP server,
the parity test the fake model server of tests/llm."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))  # its HTTP MCP test server
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))  # its fake model server
