"""What re-reading capability files on change costs a turn. Prints, asserts nothing.

    .venv/bin/python bench/capability_files.py [--skills 30] [--runs 2000]

The workspace host compares the files skills, rules, agent types, project
hooks and `.mcp.json` are read from with what it read
(`CapabilityFiles.changed()`) at the start of every turn and on every
`workspace/didChangeWatchedFiles`. Measured here on a folder with --skills
skills (project and user), ten rules, five agent types, a hooks file and a
`.mcp.json`, nothing changed (the usual case), median of --runs; and the same
with no capability files at all (most folders). Target: well under 1 ms, next
to a turn's model request.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from agent_lsp.workspace.capability_files import CapabilityFiles


def populate(root: Path, config: Path, skills: int) -> None:
    for n in range(skills):
        base = (root / ".agents" / "skills") if n % 2 else (config / "skills")
        (base / f"skill{n}").mkdir(parents=True)
        (base / f"skill{n}" / "SKILL.md").write_text(f"---\nname: skill{n}\ndescription: skill {n}\n---\nDo it.\n")
    (root / ".agents" / "rules").mkdir(parents=True)
    for n in range(10):
        (root / ".agents" / "rules" / f"rule{n}.md").write_text("A rule.\n")
    (root / ".agents" / "agents").mkdir(parents=True)
    for n in range(5):
        (root / ".agents" / "agents" / f"agent{n}.md").write_text("---\nname: a\ndescription: d\n---\nPrompt.\n")
    (root / ".agents" / "settings.json").write_text('{"hooks": {}}')
    (root / ".mcp.json").write_text('{"mcpServers": {}}')


def median_us(files: CapabilityFiles, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        files.changed()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=30)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        empty_root, root, config, home = (Path(tmp) / name for name in ("empty", "ws", "config", "home"))
        for folder in (empty_root, root, config, home):
            folder.mkdir()
        populate(root, config, args.skills)
        full = median_us(CapabilityFiles(root, config, home), args.runs)
        bare = median_us(CapabilityFiles(empty_root, config / "none", home), args.runs)
    print(f"check, {args.skills} skills + 10 rules + 5 agent types + hooks + .mcp.json: {full:8.1f} µs median  (target < 1000 µs)")
    print(f"check, no capability files:                               {bare:8.1f} µs median  (target < 1000 µs)")


if __name__ == "__main__":
    main()
