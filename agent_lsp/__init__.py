"""agent_lsp: a language server that hosts an AI coding agent."""

__version__ = "0.1.0"
