"""The built-in tools, over the Editor port.

    tools = build_tools(editor, roots, policy=PermissionPolicy(...), journal=EditJournal())

Reads (read_file, list_dir, glob, grep) run in parallel; writes and the shell
are exclusive. Every path is confined to `roots` (see `agent_lsp.tools.paths`).
With no policy, every call is allowed (tests and trusted headless use); with no
journal, edits are not recorded for turn revert.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_lsp.tools.command_env import CommandEnvPolicy  # light: stdlib and secrets only

if TYPE_CHECKING:
    from agent_lsp.agent.ports import Editor, Tool
    from agent_lsp.sandbox import SandboxPolicy
    from agent_lsp.tools.base import ChangeReview, CommandWatcher, EditRecorder, PermissionGate
    from agent_lsp.tools.language_port import LanguageIntelligence


def build_tools(
    editor: Editor,
    roots: list[Path],
    policy: PermissionGate | None = None,
    journal: EditRecorder | None = None,
    command_env: CommandEnvPolicy = CommandEnvPolicy(),
    commands: CommandWatcher | None = None,
    review: ChangeReview | None = None,
    language: LanguageIntelligence | None = None,
    problems_after_edit: bool = True,
    sandbox: SandboxPolicy | None = None,
) -> list[Tool]:
    # Imported here, not at the top: this package's text model and path helpers
    # (tools/text.py, tools/paths.py) serve every layer, the headless client
    # included, and importing them must not load the tools, the agent and pydantic.
    from agent_lsp.tools.base import ToolEnv
    from agent_lsp.tools.edit import EditFile
    from agent_lsp.tools.files import CreateFileTool, DeleteFileTool, RenameFileTool, WriteFile
    from agent_lsp.tools.paths import WorkspaceRoots
    from agent_lsp.tools.read import ReadFile
    from agent_lsp.tools.search import Glob, Grep, ListDir
    from agent_lsp.tools.shell import RunCommand

    from agent_lsp.tools.language import LanguageTool

    tool_classes: tuple[type, ...] = (ReadFile, ListDir, Glob, Grep, EditFile, WriteFile, CreateFileTool, DeleteFileTool,
                                      RenameFileTool, RunCommand)
    if language is not None:
        tool_classes += (LanguageTool,)
    env = ToolEnv(editor=editor, roots=WorkspaceRoots(roots), policy=policy, journal=journal, command_env=command_env,
                  commands=commands, review=review, language=language, problems_after_edit=problems_after_edit,
                  sandbox=sandbox)
    return [cls(env) for cls in tool_classes]
