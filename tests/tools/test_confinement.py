"""No tool reaches outside the workspace roots, whatever the path looks like."""

from pathlib import Path

import pytest

from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots


@pytest.fixture
def escapes(ws: Path, outside: Path) -> dict[str, str]:
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_dir").symlink_to(outside)
    return {
        "dotdot": "../outside/secret.txt",
        "dotdot-inside-first": "src/../../outside/secret.txt",
        "absolute": str(outside / "secret.txt"),
        "symlink-file": "link_file",
        "symlink-dir": "link_dir/secret.txt",
        "file-uri": (outside / "secret.txt").as_uri(),
        "home": "~/.bashrc",
        "etc": "/etc/passwd",
    }


CALLS = {
    "read_file": lambda p: {"path": p},
    "list_dir": lambda p: {"path": p},
    "glob": lambda p: {"pattern": "*", "path": p},
    "grep": lambda p: {"pattern": "secret", "path": p},
    "edit_file": lambda p: {"path": p, "edits": [{"oldText": "secret", "newText": "pwned"}]},
    "write_file": lambda p: {"path": p, "content": "pwned\n"},
    "create_file": lambda p: {"path": p, "content": "pwned\n"},
    "delete_file": lambda p: {"path": p},
    "rename_file": lambda p: {"path": p, "newPath": "stolen.txt"},
    "run_command": lambda p: {"command": "cat secret.txt", "cwd": p},
}


@pytest.mark.parametrize("tool", CALLS)
async def test_every_escape_is_refused_by_every_tool(tool, escapes, disk_tools, outside):
    for kind, path in escapes.items():
        out = await disk_tools(tool, **CALLS[tool](path))
        assert out.is_error, (tool, kind, out.content)
        assert out.error["code"] == "OUTSIDE_WORKSPACE", (tool, kind, out.content)
        assert "outside the workspace" in out.content
        assert "secret" not in out.content.replace("secret.txt", "")
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_rename_target_outside_is_refused(ws, disk_tools, outside):
    out = await disk_tools("rename_file", path="a.py", newPath="../outside/a.py")
    assert out.error["code"] == "OUTSIDE_WORKSPACE"
    assert (ws / "a.py").exists() and not (outside / "a.py").exists()


async def test_paths_inside_are_accepted_in_every_spelling(ws, disk_tools):
    for spelling in ["a.py", "./a.py", "src/../a.py", str(ws / "a.py"), (ws / "a.py").as_uri()]:
        out = await disk_tools("read_file", path=spelling)
        assert not out.is_error, (spelling, out.content)


def test_messages_say_why(ws, outside):
    roots = WorkspaceRoots([ws])
    (ws / "out").symlink_to(outside)
    with pytest.raises(OutsideWorkspaceError, match="symbolic link that points outside"):
        roots.resolve("out/secret.txt")
    with pytest.raises(OutsideWorkspaceError, match="is outside the workspace"):
        roots.resolve("../x")
    with pytest.raises(OutsideWorkspaceError, match="not a file path"):
        roots.resolve("https://example.com/a.py")
    assert roots.resolve("src/util.py") == ws / "src" / "util.py"
    assert roots.resolve("not/yet/there.py") == ws / "not" / "yet" / "there.py"


def test_a_symlink_inside_that_stays_inside_is_fine(ws):
    (ws / "alias.py").symlink_to(ws / "a.py")
    assert WorkspaceRoots([ws]).resolve("alias.py") == ws / "a.py"


def test_several_roots(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    roots = WorkspaceRoots([one, two])
    assert roots.resolve(str(two / "x.py")) == two / "x.py"
    assert roots.resolve("x.py") == one / "x.py"
    assert roots.display(two / "x.py") == str(two / "x.py") and roots.display(one / "x.py") == "x.py"
