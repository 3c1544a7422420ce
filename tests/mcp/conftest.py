"""MCP servers through the real language server: reuse the LSP and tool harnesses."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "lsp"))
sys.path.insert(0, str(TESTS / "lsp_tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
