import shutil
from pathlib import Path

import pytest

from agent_lsp.tools import build_tools
from agent_lsp.tools.search import Grep, GrepInput, ListDirInput
from agent_lsp.workspace.disk_editor import DiskEditor

from tool_fakes import BufferEditor, Ctx, Tools

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed")


@pytest.fixture
def tree(tmp_path: Path, outside: Path) -> Path:
    root = tmp_path / "tree"
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n/top_only.txt\ndocs/**/*.tmp\n",
        "a.py": "needle = 1\nother\nneedle again\n",
        "b.txt": "".join(f"line {i}\n" for i in range(1, 20)) + "a NEEDLE here\n" + "tail\n",
        "crlf.txt": "first\r\nneedle crlf\r\nlast\r\n",
        "top_only.txt": "needle hidden at the top\n",
        "keep.log": "needle kept\n",
        "drop.log": "needle dropped\n",
        "build/out.py": "needle in build\n",
        "docs/x/y.tmp": "needle tmp\n",
        "docs/x/y.md": "needle doc\n",
        "sub/.gitignore": "local.py\n",
        "sub/local.py": "needle local\n",
        "sub/top_only.txt": "needle not at the top\n",
        "sub/deep/z.py": "x = 'needle'\nneedle()\n",
        "sub/deep/trace.log": "needle in a log ignored from the root\n",
        "sub/deep/build/gen.py": "needle generated\n",
        "sub/kept/.gitignore": "!*.log\n",
        "sub/kept/kept.log": "needle re-included below\n",
        ".github/ci.yml": "run: needle\n",
        ".git/config": "needle in git\n",
        "a.py.bak": "needle bak\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    (root / "bin.dat").write_bytes(b"needle\0\1\2")
    (root / "link_out").symlink_to(outside)
    return root


def grep_tools(root: Path, ripgrep, editor=None) -> Grep:
    from agent_lsp.tools.base import ToolEnv
    from agent_lsp.tools.paths import WorkspaceRoots

    return Grep(ToolEnv(editor or DiskEditor([root]), WorkspaceRoots([root])), ripgrep=ripgrep)


async def grep(root, ripgrep, editor=None, **args):
    tool = grep_tools(root, ripgrep, editor)
    return await tool.run(GrepInput.model_validate(args), Ctx())


async def test_grep_python_fallback_respects_gitignore(tree):
    out = await grep(tree, None, pattern="needle")
    files = [block.splitlines()[0] for block in out.content.split("\n\n")]
    assert files == [".github/ci.yml", "a.py", "a.py.bak", "crlf.txt", "docs/x/y.md", "keep.log",
                     "sub/deep/z.py", "sub/kept/kept.log", "sub/top_only.txt"]  # fmt: skip
    assert out.content.startswith(".github/ci.yml\n1:run: needle\n\na.py\n1:needle = 1\n3:needle again\n")
    assert out.meta == {"matches": 11, "files": 9, "truncated": False}


ARGUMENT_SETS = {
    "plain": {"pattern": "needle"},
    "context": {"pattern": "needle", "contextLines": 1},
    "ignore-case": {"pattern": "NEEDLE", "caseSensitive": False, "contextLines": 2},
    "glob-name": {"pattern": "needle", "glob": "*.py"},
    "glob-path": {"pattern": "needle", "glob": "sub/**/*.py"},
    "folder": {"pattern": "needle", "path": "sub"},
    # .gitignore files above the searched folder still apply
    "deep-folder": {"pattern": "needle", "path": "sub/deep"},
    # a file named explicitly is searched even if ignored
    "ignored-file": {"pattern": "needle", "path": "sub/local.py"},
    "crlf-anchor": {"pattern": r"crlf$"},
    "cap": {"pattern": r"^needle\b", "maxResults": 2},
    "cap-context": {"pattern": "needle", "maxResults": 3, "contextLines": 1},
    # look-behind: rg cannot compile it, the Python search answers
    "look-behind": {"pattern": "(?<=x = ')needle"},
    "no-match": {"pattern": "absent-text"},
}


@needs_rg
@pytest.mark.parametrize("args", ARGUMENT_SETS.values(), ids=ARGUMENT_SETS.keys())
async def test_grep_same_output_with_and_without_ripgrep(tree, args):
    with_rg = await grep(tree, RG, **args)
    without = await grep(tree, None, **args)
    assert with_rg.content == without.content
    assert with_rg.meta == without.meta


async def test_grep_context_and_cap(tree):
    out = await grep(tree, None, pattern="NEEDLE", contextLines=1, path="b.txt")
    assert out.content == "b.txt\n19-line 19\n20:a NEEDLE here\n21-tail"
    capped = await grep(tree, None, pattern="needle", maxResults=3)
    assert capped.meta["matches"] == 3 and capped.meta["truncated"]
    assert capped.content.endswith("[showing the first 3 matching lines; narrow path/glob or raise maxResults]")


async def test_grep_searches_open_buffers_as_the_user_sees_them(tree):
    editor = BufferEditor([tree])
    editor.open(tree / "a.py", "nothing here\nunsaved needle\n")
    editor.open(tree / "drop.log", "needle in an ignored file\n")
    out = await grep(tree, RG, editor, pattern="needle", path=".", glob="*.py")
    assert "a.py\n2:unsaved needle" in out.content
    assert "needle again" not in out.content  # disk text of an open file is not what the user sees
    assert "drop.log" not in out.content


async def test_grep_bad_regex_is_a_clear_error(tree):
    out = await grep(tree, None, pattern="(unclosed")
    assert out.is_error and out.error["code"] == "BAD_PATTERN" and "(unclosed" in out.content


async def test_list_dir_hides_ignored_entries(tree):
    tools = Tools(DiskEditor([tree]), [tree])
    out = await tools("list_dir")
    assert out.content.splitlines() == [
        ".github/", ".gitignore", "a.py", "a.py.bak", "b.txt", "bin.dat", "crlf.txt", "docs/",
        "keep.log", "link_out/", "sub/", "[4 entries hidden by .gitignore]",
    ]  # fmt: skip
    sub = await tools("list_dir", path="sub")
    assert sub.content.splitlines() == [
        ".gitignore", "deep/", "kept/", "top_only.txt", "[1 entries hidden by .gitignore]"
    ]  # fmt: skip
    missing = await tools("list_dir", path="nope")
    assert missing.is_error and missing.error["code"] == "NOT_FOUND"
    assert ListDirInput().path == "."


async def test_glob_finds_by_name_and_path(tree):
    tools = Tools(DiskEditor([tree]), [tree])
    by_name = await tools("glob", pattern="*.py")
    assert by_name.content.splitlines() == ["a.py", "sub/deep/z.py"]
    by_path = await tools("glob", pattern="docs/**/*.{md,tmp}")
    assert by_path.content.splitlines() == ["docs/x/y.md"]
    under = await tools("glob", pattern="*.txt", path="sub")
    assert under.content.splitlines() == ["sub/top_only.txt"]
    none = await tools("glob", pattern="*.rs")
    assert not none.is_error and "No files match" in none.content


async def test_searches_do_not_follow_symlinks_out(tree):
    tools = Tools(DiskEditor([tree]), [tree])
    out = await tools("grep", pattern="secret")
    assert out.content == "No matches for 'secret'."
    listed = await tools("glob", pattern="**/*.txt")
    assert "secret" not in listed.content
    assert build_tools  # the public entry point builds these tools


GITIGNORE_CASES = {
    "dir-only": ("out/\n", ["out/a.txt", "x/out/b.txt", "out.txt", "y/out"]),
    "anchored": ("/root.txt\n", ["root.txt", "d/root.txt"]),
    "middle-slash": ("d/e.txt\n", ["d/e.txt", "x/d/e.txt"]),
    "double-star": ("a/**/z.txt\n", ["a/z.txt", "a/b/z.txt", "a/b/c/z.txt", "b/a/z.txt"]),
    "leading-double-star": ("**/cache\n", ["cache/x", "p/cache/y", "p/cachex"]),
    "trailing-double-star": ("logs/**\n", ["logs/a", "logs/b/c", "logsx"]),
    "negation": ("*.txt\n!keep.txt\n", ["a.txt", "keep.txt", "d/keep.txt", "d/b.txt"]),
    "class-and-question": ("file[0-9].?s\n", ["file1.js", "file1.ts", "filea.js", "file12.js"]),
    "comment-and-escape": ("# comment\n\\#hash\n", ["#hash", "comment"]),
    "trailing-space": ("spaced.txt   \n", ["spaced.txt"]),
    "nested-override": ("*.log\n", ["a.log", "sub/b.log", "sub/.gitignore=!b.log"]),
}


@needs_rg
@pytest.mark.parametrize("case", GITIGNORE_CASES.values(), ids=GITIGNORE_CASES.keys())
def test_gitignore_walk_agrees_with_ripgrep(tmp_path, case):
    import subprocess

    from agent_lsp.tools.ignore import walk_files

    rules, names = case
    root = tmp_path / "t"
    root.mkdir()
    (root / ".gitignore").write_text(rules)
    for name in names:
        name, _, content = name.partition("=")
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content.replace("\\n", "\n") + "\n" if content else "x\n")
    ours = sorted(p.relative_to(root).as_posix() for p in walk_files(root, root))
    rg = subprocess.run(
        [RG, "--files", "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-global",
         "--no-ignore-exclude", "--no-ignore-parent", "--glob", "!.git", "."],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    theirs = sorted(line.removeprefix("./") for line in rg.stdout.splitlines())
    assert ours == theirs
