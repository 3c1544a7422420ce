"""The fixed prompt: the system prompt and every tool schema a request carries,
in tokens counted as characters / 4 (the rule of thumb a tokenizer-free
estimate uses; a real tokenizer cuts English and JSON a little finer).

Built as a server builds it for a folder with no AGENTS.md: the workspace
host's system prompt and tools, the language tool included (as when a
language server or the editor answers). Printed per tool, as the OpenAI
format sends it (`{"type": "function", "function": {...}}`, compact JSON),
for the full set and for the small set that windows under 8k get, with the
4k target.

Run: .venv/bin/python bench/fixed_prompt.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_lsp.config import Settings  # noqa: E402
from agent_lsp.workspace.disk_editor import DiskEditor  # noqa: E402
from agent_lsp.workspace.host import WorkspaceHost  # noqa: E402

TARGET_4K = 1450


def tokens(chars: int) -> int:
    return (chars + 3) // 4


def wire(spec: dict) -> str:
    function = {"name": spec["name"], "description": spec["description"], "parameters": spec["parameters"]}
    return json.dumps({"type": "function", "function": function}, separators=(",", ":"), ensure_ascii=False)


async def measure() -> dict:
    try:
        from agent_lsp.agent.tool_set import offered
    except ImportError:  # the code before the small set
        offered = None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = Settings.model_validate({"model": {"provider": "scripted"}, "sessionsDir": str(folder / ".sessions")})
        host = WorkspaceHost(folder, settings=settings, editor=DiskEditor([folder]), env={})
        host.editor_language = lambda _settings: object()  # as when the editor's language servers answer
        try:
            prompt = host.system_prompt
            system = prompt.whole() if hasattr(prompt, "whole") else prompt()  # with the folder's part
            specs = host.tool_registry().specs()
        finally:
            await host.close()
    per_tool = {spec["name"]: tokens(len(wire(spec))) for spec in specs}
    small = [s["name"] for s in offered(specs, "small")] if offered else []
    result = {"system": tokens(len(system)), "tools": per_tool,
              "full": tokens(len(system) + sum(len(wire(s)) for s in specs))}
    if small:
        result["small"] = tokens(len(system) + sum(len(wire(s)) for s in specs if s["name"] in small))
        result["smallSet"] = small
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    figures = asyncio.run(measure())
    if parser.parse_args().json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{'system prompt':<16}{figures['system']:>6}")
    for name, n in figures["tools"].items():
        mark = " *" if name in figures.get("smallSet", ()) else ""
        print(f"{name:<16}{n:>6}{mark}")
    print(f"{'full set':<16}{figures['full']:>6}  ({len(figures['tools'])} tools)")
    if "small" in figures:
        verdict = "ok" if figures["small"] <= TARGET_4K else "over"
        print(f"{'small set (*)':<16}{figures['small']:>6}  (windows under 8k; target <= {TARGET_4K} at 4k: {verdict})")


if __name__ == "__main__":
    main()
