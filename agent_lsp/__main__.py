"""`python -m agent_lsp` is the `agent-lsp` command."""

import sys

try:
    from agent_lsp.cli.main import main
except KeyboardInterrupt:  # Ctrl-C while Python still imports the CLI: quit as main() would, no traceback
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
