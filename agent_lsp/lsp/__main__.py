"""`python -m agent_lsp.lsp`: serve LSP on stdio (what `agent-lsp` does with no arguments)."""

from agent_lsp.lsp.server import serve_stdio

serve_stdio()
