"""The layer rules of docs/architecture.md, checked over every module of agent_lsp.

Every import counts: at module level, inside functions (lazy imports), under
`if TYPE_CHECKING:`, and modules reached by name through
`importlib.import_module("...")` or `sys.modules["..."]`. A layer is the
package directly under agent_lsp (`agent_lsp/lsp/*` is the lsp layer,
whatever its files are called).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agent_lsp"

# Higher imports lower, never the other way; equal ranks do not import each other.
RANK = {
    "__main__": 8,  # `python -m ...` entry points, above everything
    "cli": 7,
    "daemon": 6.5,  # the agent host: one process serving every window's connection through the faces
    "lsp": 6,
    "acp": 6,  # the ACP face: beside lsp, above workspace
    "service": 5.5,  # the application service: what both faces do when a request arrives, above workspace
    "workspace": 5,
    "mcp": 4.5,  # MCP servers as tools: uses tools/base.py and config, used by the workspace host
    "language": 4.5,  # language servers we run, as an LSP client: implements tools' language port
    "config": 4,
    "tools": 4,
    "views": 3.5,  # views of a session (title, Markdown transcript): read from its events, above agent and store
    "agent": 3,
    "llm": 2,
    "store": 1,
    "sandbox": 0.5,  # agent_lsp/sandbox: the sandbox of the agent's commands and hooks; imports only leaves
    # Leaves every layer may use; they import nothing of ours.
    "secrets": 0,  # agent_lsp/secrets.py: masking secrets in whatever leaves the process
    "process": 0,  # agent_lsp/process.py: child processes that die with the server
    "visible": 0,  # agent_lsp/visible.py: control characters shown, not acted on, where a person reads text
    "jsonrpc": 0,  # agent_lsp/jsonrpc.py: how both faces answer a message that is not JSON-RPC
    "__init__": 0,  # the package root: only the version, imports nothing of ours
}

# Third-party packages only some layers may use (any other third-party import is free).
# The cli is an LSP *client* of our server: it may use pygls' JSON-RPC client side,
# the lsprotocol converters and pygls' position codec, never pygls' server.
RESTRICTED = {
    "pygls": {
        "lsp": ("pygls",),
        "cli": ("pygls.client", "pygls.lsp.client", "pygls.protocol", "pygls.exceptions", "pygls.workspace.position_codec"),
        "language": ("pygls.lsp.client", "pygls.protocol", "pygls.workspace.position_codec"),
    },
    "lsprotocol": {"lsp": ("lsprotocol",), "cli": ("lsprotocol",), "language": ("lsprotocol",)},
    "httpx": {"llm": ("httpx",)},
    "acp": {"acp": ("acp",)},  # agent-client-protocol belongs to the ACP face
}

# Where a layer may use only part of a lower one: the agent takes the model's
# plain data types and the streams' precedence (`llm/precedence.py`: asyncio
# only), never a provider (which would bring httpx).
NARROW = {("agent", "llm"): ("agent_lsp.llm.types", "agent_lsp.llm.precedence")}

@dataclass(frozen=True)
class Import:
    file: str  # relative to agent_lsp/, e.g. "lsp/editor.py"
    line: int
    module: str


def layer_of_file(relative: str) -> str:
    if relative.endswith("__main__.py"):
        return "__main__"  # `python -m agent_lsp[.lsp]`: an entry point, whichever package holds it
    first = relative.split("/")[0]
    return first.removesuffix(".py")


def layer_of_module(module: str) -> str | None:
    """The layer of one of our modules (None for third-party ones)."""
    parts = module.split(".")
    if parts[0] != "agent_lsp":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(relative: str) -> list[str]:
    parts = ["agent_lsp", *Path(relative).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def imports_of(relative: str, source: str) -> list[Import]:
    tree = ast.parse(source)
    this = module_name(relative)
    package = this if relative.endswith("__init__.py") else this[:-1]
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    def named(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    def is_sys_modules(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys"

    found: list[Import] = []
    for node in ast.walk(tree):
        modules: list[str | None] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                modules = [node.module]
            else:
                base = package[: len(package) - (node.level - 1)]
                if node.module:
                    modules = [".".join([*base, node.module])]
                else:  # `from . import x`: x may be a module
                    modules = [".".join([*base, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if callee in ("import_module", "__import__"):
                modules = [named(node.args[0])]
            elif callee == "get" and isinstance(func, ast.Attribute) and is_sys_modules(func.value):
                modules = [named(node.args[0])]
        elif isinstance(node, ast.Subscript) and is_sys_modules(node.value):
            modules = [named(node.slice)]
        found += [Import(relative, node.lineno, m) for m in modules if m]
    return found


def violations(relative: str, source: str) -> list[str]:
    layer = layer_of_file(relative)
    problems = []
    for imp in imports_of(relative, source):
        where = f"agent_lsp/{imp.file}:{imp.line} imports {imp.module}"
        target = layer_of_module(imp.module)
        if target is not None:
            if target == layer:
                continue
            if target not in RANK or layer not in RANK:
                problems.append(f"{where}: a layer docs/architecture.md does not name")
            elif RANK[target] >= RANK[layer]:
                problems.append(f"{where}: {layer} may only import layers below it, and {target} is not")
            elif (layer, target) in NARROW and imp.module not in NARROW[layer, target]:
                problems.append(f"{where}: from {target}, {layer} may only import {', '.join(NARROW[layer, target])}")
            continue
        top = imp.module.split(".")[0]
        if top in RESTRICTED:
            allowed = RESTRICTED[top].get(layer, ())
            if not any(imp.module == a or imp.module.startswith(a + ".") for a in allowed):
                users = ", ".join(RESTRICTED[top])
                problems.append(f"{where}: only {users} may use {top}" + (f" (here: {', '.join(allowed)})" if allowed else ""))
    return problems


def all_modules() -> list[tuple[str, str]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_every_layer_imports_only_downward_and_only_its_own_libraries():
    modules = all_modules()
    assert len(modules) > 40 and {layer_of_file(f) for f, _ in modules} == set(RANK)
    problems = [problem for relative, source in modules for problem in violations(relative, source)]
    assert problems == [], "layer rules broken:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("relative", "source", "expected"),
    [
        ("agent/loop.py", "def run():\n    import pygls.lsp.server\n", "only lsp, cli, language may use pygls"),
        ("agent/loop.py", "from httpx import AsyncClient\n", "only llm may use httpx"),
        ("agent/loop.py", "if TYPE_CHECKING:\n    from lsprotocol import types\n", "only lsp, cli, language may use lsprotocol"),
        ("tools/read.py", "from agent_lsp.lsp.editor import LspEditor\n", "tools may only import layers below it"),
        ("tools/read.py", "from ..config import Settings\n", "tools may only import layers below it"),
        ("store/store.py", "from agent_lsp.agent import Agent\n", "store may only import layers below it"),
        ("workspace/host.py", "import importlib\nM = 'agent_lsp.cli.main'\nimportlib.import_module(M)\n", "workspace may only"),
        ("lsp/features.py", "import sys\nsys.modules['agent_lsp.cli.run']\n", "lsp may only import layers below it"),
        ("agent/agent.py", "from agent_lsp.llm.factory import create_provider\n", "agent may only import agent_lsp.llm.types"),
        ("cli/client.py", "from pygls.lsp.server import LanguageServer\n", "only lsp, cli, language may use pygls (here: pygls.client"),
        ("service/agent_service.py", "from agent_lsp.lsp.language_server import AgentLanguageServer\n", "service may only import layers below it"),
        ("service/agent_service.py", "from agent_lsp.acp.folders import AcpFolders\n", "service may only import layers below it"),
        ("service/messages.py", "from pygls.exceptions import JsonRpcInvalidParams\n", "only lsp, cli, language may use pygls"),
        ("service/messages.py", "from lsprotocol import types\n", "only lsp, cli, language may use lsprotocol"),
        ("service/directory.py", "from acp import RequestError\n", "only acp may use acp"),
        ("workspace/host.py", "from agent_lsp.service import AgentService\n", "workspace may only import layers below it"),
    ],
)
def test_the_checker_reports_forbidden_imports(relative, source, expected):
    (problem,) = violations(relative, source)
    assert expected in problem and relative in problem


def test_the_checker_allows_what_the_rules_allow():
    allowed = [
        ("cli/client.py", "from pygls.client import JsonRPCClient\nfrom agent_lsp.lsp import server\n"),
        ("lsp/__main__.py", "from agent_lsp.cli.main import main\n"),
        ("lsp/editor.py", "from pygls.workspace.position_codec import PositionCodec\nfrom agent_lsp.tools.text import line_starts\n"),
        ("agent/agent.py", "from agent_lsp.llm.types import LlmError\nfrom agent_lsp.store.session import Event\nfrom . import inbox\n"),
        ("llm/transport.py", "import httpx\n"),
        ("lsp/features/agent_requests.py", "from agent_lsp.service import AgentService\n"),
        ("acp/face.py", "from agent_lsp.service import AgentService, Message\n"),
        ("service/agent_service.py", "from agent_lsp.workspace.host import WorkspaceHost\nfrom agent_lsp.mcp import McpManager\n"),
    ]
    for relative, source in allowed:
        assert violations(relative, source) == [], relative


def feature_imports(relative: str, source: str) -> list[str]:
    """Imports of another LSP feature module by a feature module: what features share
    is in the application service or a module of lsp/ beside them, not in a feature."""
    if not relative.startswith("lsp/features/") or relative.endswith("__init__.py"):
        return []
    found = [(imp.line, imp.module) for imp in imports_of(relative, source) if imp.module.startswith("agent_lsp.lsp.features.")]
    found += [(node.lineno, f"agent_lsp.lsp.features.{alias.name}")  # `from agent_lsp.lsp.features import x`
              for node in ast.walk(ast.parse(source))
              if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "agent_lsp.lsp.features"
              for alias in node.names]
    return [f"agent_lsp/{relative}:{line} imports {module}" for line, module in found]


def test_lsp_feature_modules_do_not_import_each_other():
    problems = [problem for relative, source in all_modules() for problem in feature_imports(relative, source)]
    assert problems == [], "feature modules importing each other:\n" + "\n".join(problems)


def test_the_feature_checker_sees_an_import_of_another_feature():
    source = ("from agent_lsp.lsp.features.watched_files import refresh\nfrom . import review_requests\n"
              "from agent_lsp.lsp.features import mcp_requests\n")
    assert len(feature_imports("lsp/features/commands.py", source)) == 3
    assert feature_imports("lsp/features/commands.py", "from agent_lsp.lsp.messages import message\n") == []
    assert feature_imports("lsp/handlers.py", source) == []  # the registration imports them all


# Rule 4: the variables that are settings (or choose and reach a model) are read by config only.
SETTING_VARIABLE = re.compile(r"^(AGENT_LSP|OPENAI|ANTHROPIC)_[A-Z0-9_]+$")
READS_SETTINGS_ITSELF = {
    "config/environment.py": "the settings and model keys the environment carries",
    "config/files.py": "AGENT_LSP_CONFIG, the user's settings file",
    "config/layers.py": "AGENT_LSP_CONFIG, whether the user named the settings file",
    "config/policy.py": "AGENT_LSP_POLICY, the managed policy file",
    # Logging is set up before anything loads (config brings pydantic, which the
    # fast start defers); an invalid value is still reported by the settings.
    "cli/main.py": "AGENT_LSP_LOG_LEVEL for the log set-up at start",
}


def setting_reads(source: str) -> list[str]:
    """Names of setting variables looked up by `.get("X")`, `getenv("X")` or `[ "X" ]`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        key = None
        if isinstance(node, ast.Call) and node.args and (
            isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "getenv", "pop")
            or isinstance(node.func, ast.Name) and node.func.id == "getenv"
        ):
            key = node.args[0]
        elif isinstance(node, ast.Subscript):
            key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and SETTING_VARIABLE.match(key.value):
            found.append(key.value)
    return found


def test_settings_come_from_the_environment_through_config_only():
    problems = [
        f"{relative}: reads {name} (take it from the settings or config.environment.model_environment())"
        for relative, source in all_modules()
        if relative not in READS_SETTINGS_ITSELF
        for name in setting_reads(source)
    ]
    assert problems == [], "\n".join(problems)


def test_the_environment_checker_sees_each_way_of_reading():
    source = 'import os\nos.environ.get("OPENAI_API_KEY")\nos.getenv("AGENT_LSP_MODEL")\nenv["ANTHROPIC_BASE_URL"]\nenv.get("HOME")\n'
    assert setting_reads(source) == ["OPENAI_API_KEY", "AGENT_LSP_MODEL", "ANTHROPIC_BASE_URL"]


# No import circle inside agent_lsp: a helper takes what it uses (values, callables,
# a small interface), it does not import the module that builds it.


def import_edges(relative: str, source: str, known: set[str]) -> set[str]:
    """Our modules that `relative` imports (any import counts, as above). `from
    package import module` imports that module; the package counts only when a
    name of its own is imported (as for `import a.b.c`, the packages a module sits
    in are not counted: Python imports them first whoever asks)."""
    this = ".".join(module_name(relative))
    lines = {node.lineno: node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    edges = set()
    for imp in imports_of(relative, source):
        node = lines.get(imp.line)
        if node is None or imp.module not in known:
            edges.add(imp.module)
            continue
        submodules = {f"{imp.module}.{alias.name}" for alias in node.names} & known
        edges |= submodules
        if len(submodules) < len(node.names):
            edges.add(imp.module)
    return {module for module in edges if module in known and module != this}


def import_circles(modules: list[tuple[str, str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a circle
    (the strongly connected components of the import graph with more than one module)."""
    known = {".".join(module_name(relative)) for relative, _ in modules}
    graph = {".".join(module_name(relative)): sorted(import_edges(relative, source, known)) for relative, source in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (the graph is deep)
        work = [(start, 0)]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, i = work[-1]
            if i < len(graph[node]):
                work[-1] = (node, i + 1)
                nxt = graph[node][i]
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, 0))
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


def test_no_import_circle_inside_agent_lsp():
    circles = import_circles(all_modules())
    assert circles == [], "modules importing each other (directly or around a circle):\n" + "\n".join(
        ", ".join(circle) for circle in circles)


def test_the_circle_checker_sees_a_circle_of_any_kind_of_import():
    modules = [
        ("workspace/host.py", "from agent_lsp.workspace.review import Review\n"),
        ("workspace/review.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .host import Host\n"),
        ("agent/loop.py", "def run():\n    from agent_lsp.agent import agent\n"),
        ("agent/agent.py", "from agent_lsp.agent.loop import TurnLoop\n"),
        ("agent/__init__.py", ""),
        ("tools/a.py", "from agent_lsp.tools import b\n"),
        ("tools/b.py", "from agent_lsp.tools.c import C\n"),
        ("tools/c.py", "import agent_lsp.tools.a\n"),
        ("tools/__init__.py", ""),
        # no circle: a package's __init__ re-exports, and its modules import each other one way
        ("store/__init__.py", "from agent_lsp.store.store import SessionStore\n"),
        ("store/store.py", "from agent_lsp.store import session\nimport agent_lsp.store.lock\n"),
        ("store/session.py", "from agent_lsp.store.lock import lock\n"),
        ("store/lock.py", ""),
    ]
    assert import_circles(modules) == [
        ["agent_lsp.agent.agent", "agent_lsp.agent.loop"],
        ["agent_lsp.tools.a", "agent_lsp.tools.b", "agent_lsp.tools.c"],
        ["agent_lsp.workspace.host", "agent_lsp.workspace.review"],
    ]


# A module's underscore names are its own: another module that needs one needs a public name.


def private_imports(relative: str, source: str, known: set[str]) -> list[str]:
    """Underscore names of another of our modules that `relative` uses: imported by
    name, or reached as an attribute of a module it imported (dunders are public)."""
    this = ".".join(module_name(relative))
    package = module_name(relative) if relative.endswith("__init__.py") else module_name(relative)[:-1]
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # a local name -> the module of ours it is bound to
    found: list[tuple[int, str]] = []

    def private(name: str) -> bool:
        return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "agent_lsp":
                    aliases[alias.asname or "agent_lsp"] = alias.name if alias.asname else "agent_lsp"
        elif isinstance(node, ast.ImportFrom):
            base = node.module if node.level == 0 else ".".join([*package[: len(package) - (node.level - 1)],
                                                                   *([node.module] if node.module else [])])
            if not base or base.split(".")[0] != "agent_lsp" or base == this:
                continue
            for alias in node.names:
                if private(alias.name):
                    found.append((node.lineno, f"{base}.{alias.name}"))
                elif f"{base}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            parts, value = [], node.value
            while isinstance(value, ast.Attribute):
                parts.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in aliases:
                module = ".".join([aliases[value.id], *parts])
                if module in known and module != this:
                    found.append((node.lineno, f"{module}.{node.attr}"))
    return [f"agent_lsp/{relative}:{line} uses {name}" for line, name in sorted(found)]


def test_no_module_uses_another_modules_private_names():
    modules = all_modules()
    known = {".".join(module_name(relative)) for relative, _ in modules}
    problems = [problem for relative, source in modules for problem in private_imports(relative, source, known)]
    assert problems == [], "private names used outside their module (make them public, or move the code):\n" + "\n".join(problems)


def test_the_private_name_checker_sees_each_way_of_reaching_one():
    known = {"agent_lsp.workspace.edit_journal", "agent_lsp.workspace.review", "agent_lsp.tools.text", "agent_lsp"}
    source = (
        "import agent_lsp.tools.text\nimport agent_lsp.tools.text as text\n"
        "from agent_lsp.workspace.edit_journal import _current, line_map\n"
        "from . import edit_journal\nfrom .edit_journal import (\n    _find_places,\n)\n"
        "from agent_lsp import __version__\n"
        "def f():\n    edit_journal._line_map()\n    text._split()\n    agent_lsp.tools.text._starts\n    self._own\n    __name__\n"
    )
    assert private_imports("workspace/review.py", source, known) == [
        "agent_lsp/workspace/review.py:3 uses agent_lsp.workspace.edit_journal._current",
        "agent_lsp/workspace/review.py:5 uses agent_lsp.workspace.edit_journal._find_places",
        "agent_lsp/workspace/review.py:10 uses agent_lsp.workspace.edit_journal._line_map",
        "agent_lsp/workspace/review.py:11 uses agent_lsp.tools.text._split",
        "agent_lsp/workspace/review.py:12 uses agent_lsp.tools.text._starts",
    ]
    own = "from agent_lsp.workspace.review import _helper\n"
    assert private_imports("workspace/review.py", own, known) == []  # its own names


def missing_modules(modules: list[tuple[str, str]]) -> list[str]:
    """Imports of our own modules that name none (any kind of import: one under
    TYPE_CHECKING never runs, so nothing else notices a module renamed under it)."""
    known = {".".join(module_name(relative)) for relative, _ in modules}
    return sorted(f"{imp.file}:{imp.line}: {imp.module}"
                  for relative, source in modules for imp in imports_of(relative, source)
                  if imp.module.startswith("agent_lsp") and imp.module not in known)


def test_every_import_of_our_own_modules_names_one_that_exists():
    assert missing_modules(all_modules()) == []


def test_the_missing_module_checker_sees_an_import_under_type_checking():
    modules = [("agent/a.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agent_lsp.agent.gone import X\n"),
               ("agent/b.py", "from agent_lsp.agent import a\nfrom agent_lsp.agent.a import thing\n"),
               ("agent/__init__.py", "")]
    assert missing_modules(modules) == ["agent/a.py:3: agent_lsp.agent.gone"]
