"""Path confinement for the workspace host.

The implementation lives in `agent_lsp.tools.paths` because the tools (a lower
layer) use it too; the host imports it from here.
"""

from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots

__all__ = ["OutsideWorkspaceError", "WorkspaceRoots"]
