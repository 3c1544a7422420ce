"""The agent's tools through the real server: reuse tests/lsp's harness."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
