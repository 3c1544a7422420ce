"""Which language servers the workspace runs, for which files, and how to start them.

Built-in defaults cover the common languages; the `languageServers` setting adds
servers or changes a default by name (`enabled: false` turns one off), in the
shape users know from Neovim, Helix and OpenCode:

    [languageServers.pyright]
    command = "pyright-langserver"
    args = ["--stdio"]
    filetypes = ["py", "pyi"]
    rootMarkers = ["pyproject.toml", "setup.py"]
    initializationOptions = {}
    settings = {python = {analysis = {typeCheckingMode = "basic"}}}

A server is used for a file when its filetypes name the file's extension and
its command is found (on PATH, or beside the Python that runs agent_lsp, where
`pip install` puts basedpyright and ruff). Of several servers for one
language, the first found in `alternatives` order serves it ("basedpyright,
else pyright").
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel


class ServerEntry(BaseModel):
    """One `languageServers.NAME` entry (a default's fields are replaced one by one)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    command: str | None = None
    args: list[str] | None = None
    filetypes: list[str] | None = None
    root_markers: list[str] | None = None
    initialization_options: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None  # answered to workspace/configuration, by section
    env: dict[str, str] | None = None
    enabled: bool = True


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: str
    args: tuple[str, ...]
    filetypes: frozenset[str]  # extensions without the dot
    language_ids: Mapping[str, str]  # extension -> LSP languageId
    root_markers: tuple[str, ...] = ()
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    group: str = ""  # servers of one group are alternatives: the first found serves
    tested: bool = True  # False: a default this project cannot install in its tests
    versioned_diagnostics: bool = False  # it gives the document version with each report (pyright does)
    configured: bool = False  # named in the languageServers setting

    def language_id(self, path: Path) -> str:
        ext = path.suffix.lstrip(".")
        return self.language_ids.get(ext, ext)

    def serves(self, path: Path) -> bool:
        return path.suffix.lstrip(".") in self.filetypes


_PYTHON = {"py": "python", "pyi": "python"}
_TS = {"ts": "typescript", "tsx": "typescriptreact", "js": "javascript", "jsx": "javascriptreact",
       "mts": "typescript", "cts": "typescript", "mjs": "javascript", "cjs": "javascript"}
_PYRIGHT_SETTINGS = {"analysis": {"diagnosticMode": "workspace", "typeCheckingMode": "standard"}}
_PY_ROOTS = ("pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json")

# Built-in defaults, in the order they are preferred within a group.
DEFAULTS: tuple[ServerSpec, ...] = (
    ServerSpec("basedpyright", "basedpyright-langserver", ("--stdio",), frozenset(_PYTHON), _PYTHON, _PY_ROOTS,
               settings={"basedpyright": _PYRIGHT_SETTINGS, "python": {}}, group="python-types",
               versioned_diagnostics=True),
    ServerSpec("pyright", "pyright-langserver", ("--stdio",), frozenset(_PYTHON), _PYTHON, _PY_ROOTS,
               settings={"python": _PYRIGHT_SETTINGS}, group="python-types", versioned_diagnostics=True),
    ServerSpec("ruff", "ruff", ("server",), frozenset(_PYTHON), _PYTHON, ("pyproject.toml", "ruff.toml", ".ruff.toml"),
               group="python-lint"),
    ServerSpec("typescript-language-server", "typescript-language-server", ("--stdio",), frozenset(_TS), _TS,
               ("tsconfig.json", "jsconfig.json", "package.json"), group="typescript"),
    ServerSpec("gopls", "gopls", (), frozenset({"go"}), {"go": "go"}, ("go.mod",), group="go", tested=False),
    ServerSpec("rust-analyzer", "rust-analyzer", (), frozenset({"rs"}), {"rs": "rust"}, ("Cargo.toml",),
               group="rust", tested=False),
    ServerSpec("clangd", "clangd", (), frozenset({"c", "h", "cc", "cpp", "hpp", "cxx"}),
               {"c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp", "cxx": "cpp"},
               ("compile_commands.json", ".clangd"), group="c", tested=False),
)


def server_specs(entries: Mapping[str, Any]) -> tuple[list[ServerSpec], list[str]]:
    """The defaults with the `languageServers` setting applied, and the problems of
    bad entries (each named; the other servers still work)."""
    specs = {spec.name: spec for spec in DEFAULTS}
    problems: list[str] = []
    for name, raw in entries.items():
        try:
            entry = ServerEntry.model_validate(raw if raw is not None else {})
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"languageServers.{name}: {where + ': ' if where else ''}{first['msg']}")
            continue
        base = specs.get(name)
        if not entry.enabled:
            specs.pop(name, None)
            continue
        if base is None and (entry.command is None or not entry.filetypes):
            problems.append(f"languageServers.{name}: a new server needs a command and filetypes")
            continue
        base = base or ServerSpec(name, entry.command or "", (), frozenset(), {}, group=name)
        specs[name] = ServerSpec(
            name=name,
            command=entry.command or base.command,
            args=tuple(entry.args) if entry.args is not None else base.args,
            filetypes=frozenset(t.lstrip(".") for t in entry.filetypes) if entry.filetypes else base.filetypes,
            language_ids=base.language_ids,
            root_markers=tuple(entry.root_markers) if entry.root_markers is not None else base.root_markers,
            initialization_options=_given(entry.initialization_options, base.initialization_options),
            settings=_given(entry.settings, base.settings),
            env=entry.env or base.env,
            group=base.group,
            tested=base.tested,
            versioned_diagnostics=base.versioned_diagnostics,
            configured=True,
        )
    return list(specs.values()), problems


def _given(value: Any, default: Any) -> Any:
    return value if value is not None else default


def find_command(command: str, path_env: str | None = None) -> str | None:
    """The executable: an absolute path as given, else on PATH, else beside this Python."""
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    found = shutil.which(command, path=path_env)
    if found:
        return found
    beside = Path(sys.executable).parent / command
    return str(beside) if os.access(beside, os.X_OK) else None


@dataclass(frozen=True)
class Choice:
    spec: ServerSpec
    executable: str | None  # None: not used
    why: str  # in words, for `config show` and the tool's answers
    off: bool = False  # a built-in server while language.discovery is false


def choose_servers(specs: list[ServerSpec], path_env: str | None = None) -> list[Choice]:
    """Every spec with whether it is used: per group, the first one found; the
    others say why not."""
    taken: dict[str, str] = {}
    choices = []
    for spec in specs:
        executable = find_command(spec.command, path_env)
        if executable is None:
            why = f"`{spec.command}` not found" + ("" if spec.tested else " (configuration only, untested here)")
        elif spec.group in taken:
            executable, why = None, f"{taken[spec.group]} serves these files"
        else:
            taken[spec.group] = spec.name
            why = f"{'configured' if spec.configured else 'built-in'}, found at {executable}"
        choices.append(Choice(spec, executable, why))
    return choices
