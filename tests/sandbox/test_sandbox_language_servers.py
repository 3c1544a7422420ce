"""The language servers the agent starts run in the commands' sandbox, with the
real bubblewrap and the real basedpyright: the server works as before, but sees
none of the user's home (an import from there does not resolve, one from a
folder outside it does), has no network of its own, and says where it runs;
with shell.sandbox = "require" and no sandbox it is not started, and says why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psutil
import pytest
from cli_helpers import agent_lsp, clean_env
from sandbox_places import Places, make_places, needs_bwrap

from agent_lsp.config import LanguageSettings
from agent_lsp.language import document_reader, workspace_language
from agent_lsp.tools.language_port import NoLanguageServer
from agent_lsp.workspace.disk_editor import DiskEditor

pytestmark = [needs_bwrap(), pytest.mark.slow]

PYRIGHT_ONLY = {"ruff": {"enabled": False}, "pyright": {"enabled": False}}


def _project(places: Places) -> Path:
    root = places.workspace
    for folder, module in ((places.home / "lib", "homemod"), (places.outside / "lib", "outmod")):
        folder.mkdir()
        (folder / f"{module}.py").write_text("VALUE = 1\n")
    (root / "pyrightconfig.json").write_text(json.dumps({"extraPaths": [str(places.home / "lib"),
                                                                        str(places.outside / "lib")]}))
    (root / "main.py").write_text("import homemod\nimport outmod\n\nprint(homemod.VALUE, outmod.VALUE)\n")
    return root


async def test_basedpyright_runs_sandboxed_and_sees_no_home(tmp_path: Path):
    places = make_places(tmp_path)
    root = _project(places)
    language = workspace_language(root, LanguageSettings(wait_seconds=20), PYRIGHT_ONLY,
                                  document_reader(DiskEditor([root])), sandbox=places.policy())
    assert language is not None
    try:
        found = await language.diagnostics([root / "main.py"], "warning")
        messages = " | ".join(p.message for p in found[root / "main.py"])
        assert 'Import "homemod" could not be resolved' in messages, messages
        assert "outmod" not in messages, messages  # outside the home: visible, read-only
        assert language.placements() == {"basedpyright": "sandboxed, no network"}
        servers = [p for p in psutil.Process().children(recursive=True)
                   if "pyright" in " ".join(p.cmdline()) and not p.name().startswith("bwrap")]
        assert servers
        for server in servers:
            assert os.readlink(f"/proc/{server.pid}/ns/net") != os.readlink("/proc/self/ns/net")
    finally:
        await language.close()


async def test_with_the_sandbox_required_and_none_working_the_server_is_not_started(tmp_path: Path):
    places = make_places(tmp_path)
    root = _project(places)
    # no bubblewrap, and the Landlock fallback off: no sandbox works
    policy = places.policy(mode="require", search_path=places.path_without_bwrap(), landlock=False)
    language = workspace_language(root, LanguageSettings(wait_seconds=5), PYRIGHT_ONLY,
                                  document_reader(DiskEditor([root])), sandbox=policy)
    assert language is not None
    try:
        with pytest.raises(NoLanguageServer) as refused:
            await language.hover(root / "main.py", (3, 7))
        assert str(refused.value).startswith('basedpyright not started: shell.sandbox is "require" and no sandbox '
                                             "works here: bubblewrap is not installed"), refused.value
        assert not language.running()
    finally:
        await language.close()


def test_config_show_says_where_each_language_server_runs(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = {"language": {"enabled": True}, "shell": {"sandboxExceptions": ["ruff server"]}}
    done = agent_lsp(["config", "show", "--json", "-w", str(workspace), "--settings", json.dumps(settings)],
                     clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    servers = {e["name"].split(" ")[0]: e["note"] for e in json.loads(done.stdout)["language_servers"]}
    assert servers["basedpyright"].startswith("used: ") and servers["basedpyright"].endswith("; sandboxed, no network")
    assert servers["ruff"].endswith('; not sandboxed: "ruff server" is a sandbox exception (shell.sandboxExceptions)')
