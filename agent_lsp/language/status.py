"""Which language servers the agent runs for a folder, and why (for `agent/language/status`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from agent_lsp.config import LanguageSettings
from agent_lsp.language.confine import place_server
from agent_lsp.language.specs import Choice
from agent_lsp.sandbox import SandboxPolicy

if TYPE_CHECKING:
    from agent_lsp.language import LazyLanguage


def server_status(settings: LanguageSettings, choices: list[Choice], language: "LazyLanguage | None",
                  sandbox: SandboxPolicy | None = None, root: Path | None = None) -> list[dict[str, Any]]:
    """One entry per known server: {name, filetypes, command, state, reason, source, sandbox}
    (`sandbox`: where it runs, or would run under the `sandbox` policy, for the servers used)."""
    running = {c.spec.name for c in language.running()} if language is not None else set()
    placed = language.placements() if language is not None else {}
    failures: Mapping[str, str] = language.failures() if language is not None else {}
    entries = []
    for choice in choices:
        spec = choice.spec
        if not settings.enabled:
            state, reason = "off", "language.enabled is false"
        elif choice.off:
            state, reason = "off", choice.why
        elif spec.name in failures:
            state, reason = "failed", failures[spec.name]
        elif spec.name in running:
            state, reason = "running", choice.why
        elif choice.executable is not None:
            state, reason = "found", choice.why + "; starts with the first file of its kind"
        elif "serves these files" in choice.why:
            state, reason = "other-serves", choice.why
        else:
            state, reason = "not-found", choice.why
        entry = {"name": spec.name, "filetypes": sorted(spec.filetypes),
                 "command": " ".join([spec.command, *spec.args]), "state": state, "reason": reason,
                 "source": "settings" if spec.configured else "built-in"}
        if spec.name in placed:
            entry["sandbox"] = placed[spec.name]
        elif state == "found" and choice.executable is not None and root is not None:
            entry["sandbox"] = place_server(sandbox, spec, choice.executable, root).describe()
        entries.append(entry)
    return entries
