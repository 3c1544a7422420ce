"""`python -m agent_lsp` is the `agent-lsp` command."""

import sys

from agent_lsp.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
