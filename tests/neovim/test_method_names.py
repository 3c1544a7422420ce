"""The plugin names every wire method through the generated table
(require("agent_lsp.protocol").METHODS), so a method renamed or removed in the
protocol is caught here instead of failing for a user at one command."""

from __future__ import annotations

import re
from pathlib import Path

from agent_lsp.lsp import protocol_gen as wire

LUA = Path(__file__).resolve().parents[2] / "editors" / "neovim" / "lua" / "agent_lsp"
GENERATED = LUA / "protocol.lua"
TABLE_USE = re.compile(r'methods\["([^"]+)"\]')
STRING = re.compile(r'"([^"\\]*)"')


def code_lines(path: Path) -> list[tuple[int, str]]:
    """The file's lines without their comments (a `--` outside a string starts one)."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for match in re.finditer(r"--", line):
            if line[: match.start()].count('"') % 2 == 0:
                line = line[: match.start()]
                break
        out.append((number, line))
    return out


def plugin_files() -> list[Path]:
    files = sorted(p for p in LUA.glob("*.lua") if p != GENERATED)
    assert len(files) > 20
    return files


def test_every_method_the_plugin_names_is_in_the_generated_table() -> None:
    known = set(wire.json_schema()["methods"])
    used = {}
    for path in plugin_files():
        for number, line in code_lines(path):
            for name in TABLE_USE.findall(line):
                used[name] = f"{path.name}:{number}"
    assert len(used) >= 30, used
    assert {name: where for name, where in used.items() if name not in known} == {}


def test_the_plugin_writes_no_method_name_as_a_plain_string() -> None:
    known = set(wire.json_schema()["methods"])
    plain = []
    for path in plugin_files():
        for number, line in code_lines(path):
            for match in STRING.finditer(line):
                if match.group(1) in known and not line[: match.start()].endswith("methods["):
                    plain.append(f"{path.name}:{number}: {line.strip()}")
    assert plain == [], "use require('agent_lsp.protocol').METHODS[...] instead of the string"
