import datetime as dt
import platform

import os

from agent_lsp.workspace.instructions import (
    SystemPrompt,
    build_system_prompt,
    build_workspace_prompt,
    find_instruction_files,
    runtime_context,
)


def test_prompt_carries_project_instructions_outermost_first(tmp_path):
    parent = tmp_path / "company"
    root = parent / "project"
    (root / "src").mkdir(parents=True)
    (parent / "AGENTS.md").write_text("Company rule: be kind.\n")
    (root / "AGENTS.md").write_text("Project rule: run pytest.\n")
    (root / "CLAUDE.md").write_text("Claude rule: tabs.\n")
    (root / "src" / "AGENTS.md").write_text("not read: below the root\n")
    prompt = build_workspace_prompt([root])
    company, project, claude = (prompt.index(s) for s in ("Company rule", "Project rule", "Claude rule"))
    assert company < project < claude
    assert "not read" not in prompt
    assert f"Project instructions from {root / 'AGENTS.md'}:" in prompt
    assert find_instruction_files(root)[-2:] == [root / "AGENTS.md", root / "CLAUDE.md"]


def test_prompt_carries_os_roots_and_date_and_the_runtime_context_the_files(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    now = dt.datetime(2026, 3, 4, 12, 0, tzinfo=dt.timezone.utc)
    prompt = build_system_prompt(now=now)
    assert f"Operating system: {platform.system()}" in prompt
    assert "Date: 2026-03-04" in prompt and "How to work:" in prompt
    assert str(root) not in prompt  # the same in every folder: the folder's own part is a message of its own
    assert build_workspace_prompt([root]) == f"Workspace roots: {root}"
    context = runtime_context([root], open_files=[root / "a.py", root / "b.py"], active_file=root / "a.py")
    assert "Files open in the editor: a.py, b.py" in context
    assert "Active file (the one the user is looking at): a.py" in context
    assert runtime_context([root]) is None


def test_prompt_without_instructions_or_files(tmp_path):
    prompt = build_workspace_prompt([tmp_path])
    assert f"Project instructions from {tmp_path}" not in prompt
    assert "Files open" not in prompt and "Active file" not in prompt


def test_system_prompt_is_reread_only_when_an_instruction_file_changes(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    agents = root / "AGENTS.md"
    agents.write_text("Rule one.\n")
    system = SystemPrompt([root], today=lambda: dt.date(2026, 3, 4))
    prompt = system.workspace
    first = prompt()
    assert "Rule one." in first and prompt() == first and "Rule one." not in system()

    # same size, same mtime: not read again (what a stat-only check cannot see is not re-read)
    stat = agents.stat()
    agents.write_text("Rule two.\n")
    os.utime(agents, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert prompt() == first

    agents.write_text("Rule three, longer.\n")
    assert "Rule three, longer." in prompt()
    (root / "CLAUDE.md").write_text("Claude rule.\n")  # a file that appears
    assert "Claude rule." in prompt()
    agents.unlink()  # and one that goes
    assert "Rule three" not in prompt() and "Claude rule." in prompt()
    assert system.whole() == system() + "\n\n" + prompt()


def test_system_prompt_follows_the_date(tmp_path):
    day = [dt.date(2026, 3, 4)]
    prompt = SystemPrompt([tmp_path], today=lambda: day[0])
    assert "Date: 2026-03-04" in prompt()
    day[0] = dt.date(2026, 3, 5)
    assert "Date: 2026-03-05" in prompt()
