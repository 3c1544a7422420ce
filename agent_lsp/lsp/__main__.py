"""`python -m agent_lsp.lsp`: serve LSP on stdio, as `agent-lsp` does with no
arguments (it is the CLI's `serve`, so the process cleans up the same way)."""

import sys

from agent_lsp.cli.main import main

sys.exit(main(["serve", *sys.argv[1:]]))
