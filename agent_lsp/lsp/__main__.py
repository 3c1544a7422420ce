"""`python -m agent_lsp.lsp`: serve LSP on stdio (what `agent-lsp` does with no arguments)."""

from agent_lsp.lsp.server import serve_stdio
from agent_lsp.secrets import install_log_masking

install_log_masking([])  # no handler is configured here: warnings go to the handler of last resort
serve_stdio()
