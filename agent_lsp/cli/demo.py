"""`agent-lsp demo`: a whole session end to end, to watch.

A small sample project (demo_workspace/, shipped with the package) is copied
to a temporary folder; the server is started as a subprocess and driven over
LSP by the headless client; the agent reads `stats.py`, fixes its bug through
`workspace/applyEdit` (applied to disk by the client) and explains the fix
while it streams. Then the demo prints the diff and where the session log is.

With no model configured the server runs a built-in scripted model that
plays a fixed, deterministic script (sent in `initializationOptions`); with a
model configured (env vars or the user config file) the same prompt goes to
the real model.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import importlib.resources
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from agent_lsp.cli.client import HeadlessClient, ServerError
from agent_lsp.cli.permission_prompt import PermissionResponder
from agent_lsp.cli.transcript import Transcript

PROMPT = (
    "mean() in stats.py returns wrong results: mean([1, 2, 3, 4]) gives 3.33 instead of 2.5. "
    "Read the file, fix the bug with edit_file, and explain the fix in one or two sentences."
)

# Typing speed of the scripted model: quick, but slow enough to see it stream.
_CHUNK_DELAY_MS = 8

DEMO_SCRIPT: list[dict[str, Any]] = [
    {
        "text": "Let me read stats.py first.",
        "chunkDelayMs": _CHUNK_DELAY_MS,
        "tools": [{"name": "read_file", "arguments": {"path": "stats.py"}}],
    },
    {
        "text": "Found it: mean() divides the sum by len(values) - 1, which is the sample-variance "
        "correction, not the mean. Fixing the divisor.",
        "chunkDelayMs": _CHUNK_DELAY_MS,
        "tools": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "stats.py",
                    "edits": [
                        {
                            "oldText": "    return sum(values) / (len(values) - 1)",
                            "newText": "    return sum(values) / len(values)",
                        }
                    ],
                },
            }
        ],
    },
    {
        "text": "Done. mean() now divides by the number of values, so mean([1, 2, 3, 4]) returns 2.5. "
        "median() was already correct.",
        "chunkDelayMs": _CHUNK_DELAY_MS,
    },
]


def demo_command(args: argparse.Namespace) -> int:
    from agent_lsp.config.layers import configuration_errors

    errors = configuration_errors(os.environ)
    if errors:  # the demo would quietly run the scripted model instead
        for error in errors:
            print(f"agent-lsp demo: {error}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(run_demo(args))
    except ServerError as error:
        print(f"agent-lsp demo: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


async def configured_model(env: Mapping[str, str]) -> str | None:
    """What the server would use as its model, or None when that is the
    scripted fallback (no provider, key or endpoint configured)."""
    from agent_lsp.config.environment import model_environment
    from agent_lsp.config.layers import SettingsLayers
    from agent_lsp.llm.factory import create_provider

    settings = SettingsLayers(env).current.model
    try:
        resolved = create_provider(settings, model_environment(env))
    except ValueError:
        return None  # a broken configuration: the server reports it; the demo stays scripted
    try:
        return None if resolved.provider_name == "scripted" else resolved.description
    finally:
        for model in (resolved, resolved.fallback):
            close = getattr(model.provider, "aclose", None) if model else None
            if close is not None:
                await close()


def fresh_demo_folder(env: Mapping[str, str]) -> Path:
    """The demo's own folder in the user's cache (`<cache>/agent-lsp/demo`), emptied
    at each run: one folder to look into afterwards, none piling up in $TMPDIR."""
    from agent_lsp.lsp.code_cache import cache_dir

    folder = cache_dir(env) / "demo"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def own_command(env: Mapping[str, str]) -> str:
    """How to run agent-lsp again, as this process was started: `agent-lsp` when
    that is on PATH, else the path of this command (e.g. .venv/bin/agent-lsp)."""
    script = Path(sys.argv[0])
    if script.name in ("agent-lsp", "agent-lsp.exe", "agent-language-server") and script.exists():
        on_path = shutil.which(script.name, path=env.get("PATH"))
        if on_path and Path(on_path).resolve() == script.resolve():
            return script.name
        try:
            return str(script.resolve().relative_to(Path.cwd()))
        except ValueError:
            return str(script.resolve())
    on_path = shutil.which("agent-lsp", path=env.get("PATH"))
    if on_path and Path(on_path).resolve().parent == Path(sys.executable).parent:
        return "agent-lsp"
    return f"{sys.executable} -m agent_lsp"


def copy_sample_project(destination: Path) -> Path:
    """Copy demo_workspace/ to `destination` (created; must not hold files)."""
    source = importlib.resources.files("agent_lsp.cli") / "demo_workspace"
    with importlib.resources.as_file(source) as source_path:
        shutil.copytree(source_path, destination, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def _snapshot(root: Path) -> dict[str, str]:
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return files


def unified_diff(before: dict[str, str], after: dict[str, str]) -> list[str]:
    lines: list[str] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        lines += difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"a/{name}" if old is not None else "/dev/null",
            tofile=f"b/{name}" if new is not None else "/dev/null",
        )
    return [line if line.endswith("\n") else line + "\n" for line in lines]


def _print_diff(transcript: Transcript, diff: list[str]) -> None:
    for line in diff:
        if line.startswith(("+++", "---")):
            code = "1"
        elif line.startswith("@@"):
            code = "36"
        elif line.startswith("+"):
            code = "32"
        elif line.startswith("-"):
            code = "31"
        else:
            code = ""
        transcript.line(line.rstrip("\n"), code)


def find_session_log(sessions_dir: Path, session_id: str) -> Path | None:
    return next(iter(sorted(sessions_dir.rglob(f"{session_id}.jsonl"))), None)


async def run_demo(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    started = time.monotonic()
    transcript = Transcript()
    base = args.dir.expanduser().resolve() if args.dir else fresh_demo_folder(env)
    workspace = copy_sample_project(base / "workspace")
    sessions_dir = base / "sessions"
    original = _snapshot(workspace)

    real_model = None if args.scripted else await configured_model(env)
    settings: dict[str, Any] = {"sessionsDir": str(sessions_dir)}
    if real_model is None:
        settings["model"] = {"provider": "scripted", "script": DEMO_SCRIPT}
        model_line = ("built-in scripted model (no model configured: set ANTHROPIC_API_KEY or "
                      "OPENAI_API_KEY, or see the README, to watch a real one)")
    else:
        model_line = real_model

    transcript.heading("agent-lsp demo")
    transcript.note(f"  sample project  {workspace}")
    transcript.note(f"  model           {model_line}")

    client = HeadlessClient(
        workspace,
        settings=settings,
        transcript=transcript,
        # Edits are allowed by default; a shell command a real model wants to
        # run is asked at the terminal (denied when there is none).
        permissions=PermissionResponder(None, transcript),
        log_file=getattr(args, "log_file", None),
        log_level=getattr(args, "log_level", None) or "warning",
        show_server_log=getattr(args, "log_level", None) is not None,
        env=dict(env),
    )
    async with client:
        version = client.server_info.get("version", "?")
        transcript.note(f"  server          {client.server_info.get('name', 'agent-lsp')} {version}, "
                        "a subprocess on stdio, driven by the headless LSP client")
        transcript.blank_line()
        transcript.heading(f"> {PROMPT}")
        transcript.blank_line()
        result = await client.followup(PROMPT)

    diff = unified_diff(original, _snapshot(workspace))
    transcript.blank_line()
    if diff:
        transcript.heading("The agent's change, as applied to disk by the LSP client:")
        _print_diff(transcript, diff)
    else:
        transcript.warn("The agent changed no file.")
    log_path = find_session_log(sessions_dir, result.session_id)
    transcript.blank_line()
    if log_path is not None:
        with log_path.open(encoding="utf-8") as lines:
            count = sum(1 for _ in lines)
        transcript.note(f"Session log ({count} JSON lines): {log_path}")
    else:
        transcript.warn(f"No session log found for {result.session_id} under {sessions_dir}")
    command = own_command(env)
    transcript.note(f"Finished in {time.monotonic() - started:.1f} s. "
                    f"Next: {command} run \"your request\" --workspace DIR  (or {command} chat)")
    if not result.ok:
        return 1
    return 0 if diff or real_model is not None else 1
