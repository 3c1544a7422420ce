import datetime as dt
import platform

from agent_lsp.workspace.instructions import build_system_prompt, find_instruction_files


def test_prompt_carries_project_instructions_outermost_first(tmp_path):
    parent = tmp_path / "company"
    root = parent / "project"
    (root / "src").mkdir(parents=True)
    (parent / "AGENTS.md").write_text("Company rule: be kind.\n")
    (root / "AGENTS.md").write_text("Project rule: run pytest.\n")
    (root / "CLAUDE.md").write_text("Claude rule: tabs.\n")
    (root / "src" / "AGENTS.md").write_text("not read: below the root\n")
    prompt = build_system_prompt([root])
    company, project, claude = (prompt.index(s) for s in ("Company rule", "Project rule", "Claude rule"))
    assert company < project < claude
    assert "not read" not in prompt
    assert f"Project instructions from {root / 'AGENTS.md'}:" in prompt
    assert find_instruction_files(root)[-2:] == [root / "AGENTS.md", root / "CLAUDE.md"]


def test_prompt_carries_os_roots_date_and_files(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    now = dt.datetime(2026, 3, 4, 12, 0, tzinfo=dt.timezone.utc)
    prompt = build_system_prompt([root], open_files=[root / "a.py", root / "b.py"], active_file=root / "a.py", now=now)
    assert f"Operating system: {platform.system()}" in prompt
    assert f"Workspace roots: {root}" in prompt
    assert "Date: 2026-03-04" in prompt
    assert "Files open in the editor: a.py, b.py" in prompt
    assert "Active file (the one the user is looking at): a.py" in prompt
    assert "edit_file" in prompt and "run_command" in prompt  # how to use the tools


def test_prompt_without_instructions_or_files(tmp_path):
    prompt = build_system_prompt([tmp_path])
    assert f"Project instructions from {tmp_path}" not in prompt
    assert "Files open" not in prompt and "Active file" not in prompt
