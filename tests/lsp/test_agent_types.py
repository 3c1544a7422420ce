"""Agent type files: front matter read as users write it, folders in precedence order, bad files reported."""

from __future__ import annotations

from pathlib import Path

from agent_lsp.workspace.agent_types import agent_type_folders, load_agent_types


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


def test_project_definitions_win_over_the_users_and_claude_files_are_read(tmp_path: Path):
    root, config, home = tmp_path / "ws", tmp_path / "config", tmp_path / "home"
    write(config / "agents", "reviewer.md", "---\nname: reviewer\ndescription: the user's\n---\nUser prompt\n")
    write(home / ".claude" / "agents", "helper.md",
          "---\nname: helper\ndescription: \"Helps\"\ntools:\n  - read_file\n  - grep\nmodel: inherit\n---\nHelp.\n")
    write(root / ".claude" / "agents", "reviewer.md", "---\nname: reviewer\ndescription: claude's\n---\nClaude\n")
    write(root / ".agents" / "agents", "reviewer.md",
          "---\nname: reviewer\ndescription: Reviews changes\ntools: [read_file, run_command]\nmodel: small-model\n---\n"
          "You review code.\n")
    types, problems = load_agent_types(agent_type_folders(root, config, home))
    assert problems == []
    assert set(types) == {"reviewer", "helper"}
    reviewer = types["reviewer"]
    assert (reviewer.description, reviewer.system_prompt, reviewer.tools, reviewer.model) == (
        "Reviews changes", "You review code.", ("read_file", "run_command"), "small-model")
    helper = types["helper"]
    assert (helper.description, helper.tools, helper.model) == ("Helps", ("read_file", "grep"), None)


def test_a_file_without_front_matter_or_description_is_reported_and_skipped(tmp_path: Path):
    folder = tmp_path / "agents"
    write(folder, "plain.md", "just a prompt\n")
    write(folder, "nodesc.md", "---\nname: nodesc\n---\nprompt\n")
    write(folder, "comma.md", "---\ndescription: Finds things\ntools: glob, grep\n---\nFind.\n")
    types, problems = load_agent_types([folder])
    assert set(types) == {"comma"}  # the file name is the name when front matter has none
    assert types["comma"].tools == ("glob", "grep")
    assert sorted(p.split(": ", 1)[1] for p in problems) == [
        "front matter has no description", "no front matter (the file must start with a '---' line)"]
