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
    "lsp": 6,
    "acp": 6,  # the ACP face: beside lsp, above workspace
    "service": 5.5,  # the application service: what both faces do when a request arrives, above workspace
    "workspace": 5,
    "mcp": 4.5,  # MCP servers as tools: uses tools/base.py and config, used by the workspace host
    "language": 4.5,  # language servers we run, as an LSP client: implements tools' language port
    "config": 4,
    "tools": 4,
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
    "config.py": "the settings layers",
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
        f"{relative}: reads {name} (take it from the settings or config.model_environment())"
        for relative, source in all_modules()
        if relative not in READS_SETTINGS_ITSELF
        for name in setting_reads(source)
    ]
    assert problems == [], "\n".join(problems)


def test_the_environment_checker_sees_each_way_of_reading():
    source = 'import os\nos.environ.get("OPENAI_API_KEY")\nos.getenv("AGENT_LSP_MODEL")\nenv["ANTHROPIC_BASE_URL"]\nenv.get("HOME")\n'
    assert setting_reads(source) == ["OPENAI_API_KEY", "AGENT_LSP_MODEL", "ANTHROPIC_BASE_URL"]
