"""The sandbox's tests: the real server through tests/lsp's harness and tests/lsp_tools'
helpers, the command line through tests/cli's."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for folder in ("lsp", "lsp_tools", "cli"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))
