"""The `agent-lsp` command: serving LSP, and a headless LSP client (run, chat,
sessions, demo) that drives the server exactly as an editor would."""
