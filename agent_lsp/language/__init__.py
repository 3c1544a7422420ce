"""Language servers the workspace runs for the agent, as an LSP client.

    language = workspace_language(root, settings.language, settings.language_servers, read)
    report = await language.after_change(await language.before_change([path]), {path: new_text})

Above tools (it implements `agent_lsp.tools.language_port`) and config, below
workspace, beside mcp. It may use pygls' client side and lsprotocol, which load
with the first language server, not with this package (the ACP face and an
idle server never load them).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Mapping

from typing import TYPE_CHECKING

from agent_lsp.config import LanguageSettings
from agent_lsp.language.specs import Choice, choose_servers, server_specs
from agent_lsp.tools.text import decode

if TYPE_CHECKING:
    from agent_lsp.agent.ports import Editor
    from agent_lsp.language.intelligence import WorkspaceLanguage
    from agent_lsp.sandbox import SandboxPolicy

MAX_FILE_BYTES = 4_000_000  # larger files are not sent to a language server

log = logging.getLogger(__name__)

__all__ = ["document_reader", "server_choices", "workspace_language"]


def server_choices(settings: LanguageSettings, entries: Mapping[str, Any],
                   path_env: str | None = None) -> tuple[list[Choice], list[str]]:
    """Every known server with whether it is used and why, and the setting's problems."""
    specs, problems = server_specs(entries)
    if settings.discovery:
        return choose_servers(specs, path_env), problems
    chosen = {c.spec.name: c for c in choose_servers([spec for spec in specs if spec.configured], path_env)}
    off = "language.discovery is false: only the servers named in languageServers run"
    return [chosen.get(spec.name) or Choice(spec, None, off, off=True) for spec in specs], problems


def document_reader(editor: "Editor") -> Callable[[Path], str | None]:
    """The text the agent sees of a file: the editor's buffer, else the file on disk."""

    def read(path: Path) -> str | None:
        snapshot = editor.document(path)
        if snapshot is not None:
            return snapshot.text
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                return None
            return decode(path.read_bytes()).text
        except OSError:
            return None

    return read


def workspace_language(root: Path, settings: LanguageSettings, entries: Mapping[str, Any],
                       read: Callable[[Path], str | None],
                       open_paths: Callable[[], list[Path]] = list,
                       sandbox: "SandboxPolicy | None" = None) -> "LazyLanguage | None":
    """The folder's language port over its own servers; None when turned off or
    when no server is found (then no language tool is offered). `sandbox`: the
    commands' sandbox, which the servers run in too (language/confine.py)."""
    if not settings.enabled:
        return None
    choices, problems = server_choices(settings, entries)
    for problem in problems:
        log.warning("%s", problem)
    if not any(choice.executable for choice in choices):
        return None

    def build() -> "WorkspaceLanguage":
        from agent_lsp.language.intelligence import WorkspaceLanguage
        from agent_lsp.language.pool import ServerPool

        return WorkspaceLanguage(ServerPool(root, choices, settings.idle_shutdown_seconds, sandbox), read,
                                 settings.wait_seconds, open_paths)

    return LazyLanguage(choices, build)


class LazyLanguage:
    """The port, made with its first real use: until a file a server serves is
    read or edited, neither pygls' client nor lsprotocol is loaded."""

    def __init__(self, choices: list[Choice], build: Callable[[], "WorkspaceLanguage"]):
        self.choices = choices
        self._build = build
        self._real: WorkspaceLanguage | None = None

    def serves(self, path: Path) -> bool:
        return any(c.executable is not None and c.spec.serves(path) for c in self.choices)

    def touch(self, path: Path) -> None:
        if self.serves(path):
            self.real.touch(path)

    @property
    def real(self) -> "WorkspaceLanguage":
        if self._real is None:
            self._real = self._build()
        return self._real

    def __getattr__(self, name: str) -> Any:  # the rest of the port, on the real one
        return getattr(self.real, name)

    def placements(self) -> dict[str, str]:
        """Where each started server runs: "sandboxed, no network", "not sandboxed: why"."""
        return {c.spec.name: c.placement for c in self.running()}

    def running(self) -> list[Any]:
        """The servers started so far (none before the first real use)."""
        return self._real.pool.running() if self._real is not None else []

    def failures(self) -> dict[str, str]:
        return dict(self._real.pool.failures) if self._real is not None else {}

    async def close(self) -> None:
        if self._real is not None:
            await self._real.close()
