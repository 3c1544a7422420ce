"""tests/acp drives `agent-lsp acp`; the cross-face tests use the LSP harness too."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
