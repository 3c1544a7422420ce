"""What the language servers cost and give the agent. Prints figures beside targets; asserts nothing.

    .venv/bin/python bench/language_tools.py [--edits 20] [--no-sandbox]

With real basedpyright and ruff (the `language` extra), in process over the
tools and a DiskEditor, on a small package of a few modules, the servers in
the commands' sandbox where it works, as the product runs them
(`--no-sandbox`: unsandboxed, to compare):

1. Start: the first edit of a folder starts its servers; the time from that
   edit's call to its result, the same for a second folder (paid per folder),
   and the next edit in the first folder (not paid again).
2. Edit -> tool result with fresh diagnostics, over --edits edits that
   alternately break and fix a call: the whole edit_file call, the servers'
   own time (the change sent -> their report for that version), and what the
   result waits beyond that (target: median <= 300 ms); side by side with the
   same edits with no language server (the reference).
3. Tokens the language features add to requests (characters / 4): the
   language tool's schema, and the problem lines added to the edit results of
   three small tasks (fix a type error, rename across files, find all callers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_lsp.agent import ToolRegistry  # noqa: E402
from agent_lsp.config import LanguageSettings  # noqa: E402
from agent_lsp.language import document_reader, workspace_language  # noqa: E402
from agent_lsp.sandbox import SandboxPolicy  # noqa: E402
from agent_lsp.tools import build_tools  # noqa: E402
from agent_lsp.workspace.disk_editor import DiskEditor  # noqa: E402

TARGET_BEYOND_MS = 300
ms = 1000.0


class Ctx:
    call_id, name, turn, step, session_id = "c", "tool", 1, 1, "bench"

    class signal:
        aborted, reason = False, None

    def progress(self, data): ...


def project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'bench'\nversion = '0'\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(
        "def total(values: list[int]) -> int:\n    return sum(values)\n\n\n"
        "def mean(values: list[int]) -> float:\n    return total(values) / len(values)\n")
    for name in ("report", "cli", "stats"):
        (root / "pkg" / f"{name}.py").write_text(
            f"from pkg.core import mean, total\n\n\ndef {name}(xs: list[int]) -> str:\n"
            f"    return f'{{total(xs)}} {{mean(xs)}}'\n")
    return root


def tools_for(root: Path, language):
    editor = DiskEditor([root])
    return {t.name: t for t in build_tools(editor, [root], language=language)}


async def call(tool, **args):
    started = time.perf_counter()
    out = await tool.run(tool.input_model.model_validate(args), Ctx())
    return out, (time.perf_counter() - started) * ms


def settings() -> LanguageSettings:
    return LanguageSettings(wait_seconds=30)


SANDBOXED = True


def language_for(root: Path):
    sandbox = SandboxPolicy(roots=(root,)) if SANDBOXED else None
    return workspace_language(root, settings(), {}, document_reader(DiskEditor([root])), sandbox=sandbox)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def start_costs(base: Path) -> None:
    print("1. start: the first edit of a folder starts its language servers")
    for label in ("first folder", "second folder"):
        root = project(base / label.replace(" ", "-"))
        language = language_for(root)
        edit = tools_for(root, language)["edit_file"]
        _, first = await call(edit, path="pkg/core.py", edits=[{"oldText": "return sum(values)", "newText": "return sum(values) + 0"}])
        _, second = await call(edit, path="pkg/core.py", edits=[{"oldText": "return sum(values) + 0", "newText": "return sum(values)"}])
        servers = ", ".join(f"{c.spec.name}: {c.placement}" for c in language.pool.running())
        print(f"   {label:14} first edit {first:7.0f} ms (servers: {servers}); next edit {second:5.0f} ms")
        await language.close()


async def edit_latency(base: Path, edits: int) -> None:
    print(f"2. edit -> result with fresh diagnostics, {edits} edits (break / fix a call in another file)")
    root = project(base / "latency")
    language = language_for(root)
    with_servers = tools_for(root, language)["edit_file"]
    plain_root = project(base / "plain")
    plain = tools_for(plain_root, None)["edit_file"]
    await call(with_servers, path="pkg/core.py", edits=[{"oldText": "return sum(values)", "newText": "return sum(values) "}])
    whole, servers_own, beyond, reference = [], [], [], []
    swaps = [("def total(values: list[int]) -> int:", "def total(values: list[int], start: int) -> int:"),
             ("def total(values: list[int], start: int) -> int:", "def total(values: list[int]) -> int:")]
    for i in range(edits):
        old, new = swaps[i % 2]
        out, took = await call(with_servers, path="pkg/core.py", edits=[{"oldText": old, "newText": new}])
        report = (out.meta or {}).get("problems") or {}
        if report.get("unknown"):
            print(f"   edit {i}: {report['unknown']}")
            continue
        own = max(_own_times(language, root / "pkg" / "core.py"))
        whole.append(took)
        servers_own.append(own)
        beyond.append(report["waitedMs"] - own)
        _, plain_took = await call(plain, path="pkg/core.py", edits=[{"oldText": old, "newText": new}])
        reference.append(plain_took)
    await language.close()
    if not whole:
        print("   no edit got its diagnostics in time")
        return
    rows = [("edit_file call, with problems", whole), ("the servers' own report time", servers_own),
            ("waited beyond their report", beyond), ("edit_file call, no servers (ref.)", reference)]
    for label, values in rows:
        print(f"   {label:34} median {statistics.median(values):6.0f} ms   p95 {percentile(values, 0.95):6.0f} ms")
    verdict = "met" if statistics.median(beyond) <= TARGET_BEYOND_MS else "NOT met"
    print(f"   target: median <= {TARGET_BEYOND_MS} ms beyond the servers' report: {verdict}")
    print("   through the editor's own language servers: bench/language_editor.py")


def _own_times(language, path: Path) -> list[float]:
    """Per server: the last change of `path` sent -> its report for that version, in ms."""
    times = []
    for client in language.pool.running():
        document, published = client.documents.get(path.as_uri()), client.published.get(path.as_uri())
        if document is not None and published is not None and published.at >= document.sent_at:
            times.append((published.at - document.sent_at) * ms)
    return times or [0.0]


async def tokens(base: Path) -> None:
    print("3. tokens added to requests (characters / 4)")
    root = project(base / "tokens")
    language = language_for(root)
    tools = tools_for(root, language)
    schema = json.dumps(ToolRegistry([tools["language"]]).specs())
    print(f"   the language tool's schema, on every request  {len(schema) // 4:5d}")
    fix, _ = await call(tools["edit_file"], path="pkg/core.py", edits=[
        {"oldText": "return total(values) / len(values)", "newText": "return total(values) / len(valuez)"}])
    await call(tools["edit_file"], path="pkg/core.py", edits=[
        {"oldText": "len(valuez)", "newText": "len(values)"}])
    rename, _ = await call(tools["language"], operation="rename", path="pkg/core.py", line=1, symbol="total",
                           newName="summed")
    callers, _ = await call(tools["language"], operation="references", path="pkg/core.py", line=5, symbol="mean")
    for label, out in (("fix a type error: the edit's problem lines", fix), ("rename across 4 files: the result", rename),
                       ("find all callers: the references result", callers)):
        text = out.content if isinstance(out.content, str) else ""
        added = text.split("\n\n")[-1] if "Problems after" in text or "No new problems" in text else text
        print(f"   {label:44} {len(added) // 4:5d}")
    await language.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--no-sandbox", action="store_true", help="run the servers unsandboxed, to compare")
    options = parser.parse_args()
    global SANDBOXED
    SANDBOXED = not options.no_sandbox
    if workspace_language(Path("."), settings(), {}, lambda p: None) is None:
        print("no language server found (pip install '.[language]'); nothing measured")
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        await start_costs(base)
        await edit_latency(base, options.edits)
        await tokens(base)


if __name__ == "__main__":
    asyncio.run(main())
