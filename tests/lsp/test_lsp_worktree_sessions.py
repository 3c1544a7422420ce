"""Sessions in their own git worktree, over the wire, with real git.

A worktree session edits files in its worktree on its own branch; the main
checkout stays as it was. The folder's listing shows the branch and what
changed; deleting refuses while the work is not landed, and with `force`
removes the worktree and the branch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_harness import EditorUnderTest, running_server
from pygls.exceptions import JsonRpcInvalidParams

pytestmark = pytest.mark.asyncio(loop_scope="module")

ORIGINAL = "def add(a, b):\n    return a - b\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> dict[str, Path]:
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    (repo / "calc.py").write_text(ORIGINAL, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    plain = tmp_path_factory.mktemp("plain")  # no repository
    return {"repo": repo, "plain": plain, "data": tmp_path_factory.mktemp("data"),
            "sessions": tmp_path_factory.mktemp("sessions")}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(places):
    async with running_server(folders=[places["repo"], places["plain"]], sessions_dir=places["sessions"],
                              env={"XDG_DATA_HOME": str(places["data"])}) as editor:
        yield editor


def worktree_paths(repo: Path) -> list[Path]:
    return [Path(line.split(" ", 1)[1]).resolve() for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


async def listed(editor: EditorUnderTest, repo: Path, session_id: str) -> dict:
    answer = await editor.request("agent/session/list", {"workspaceUri": repo.as_uri()})
    return next(s for s in answer["sessions"] if s["sessionId"] == session_id)


async def test_a_worktree_session_edits_its_worktree_and_the_main_checkout_stays(editor: EditorUnderTest, places):
    repo = places["repo"]
    editor.use_script([
        {"tools": [{"name": "write_file", "id": "w1",
                    "arguments": {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n\n# fixed\n"}}]},
        {"text": "fixed"},
    ])
    ref = await editor.request("agent/session/new", {"workspaceUri": repo.as_uri(), "worktree": True})
    sid = ref["sessionId"]
    entry = await listed(editor, repo, sid)
    worktree = Path(entry["worktree"]["path"])
    branch = entry["worktree"]["branch"]
    assert branch.startswith("agent/") and branch in git(repo, "branch", "--list", branch)
    assert worktree.resolve() in worktree_paths(repo)
    assert places["data"] in worktree.parents and repo not in worktree.parents  # outside the repository
    assert entry["worktree"]["base"] == git(repo, "rev-parse", "HEAD").strip()
    assert (entry["worktree"]["filesChanged"], entry["worktree"]["linesAdded"]) == (0, 0)
    assert entry["workspaceUri"] == repo.as_uri()

    before = len(editor.statuses)
    await editor.request("agent/followup", {"sessionId": sid, "content": "fix it"})
    await editor.wait_idle(sid, before)
    assert (worktree / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n\n# fixed\n"
    assert (repo / "calc.py").read_text(encoding="utf-8") == ORIGINAL
    assert git(repo, "status", "--porcelain") == ""  # the main checkout untouched

    entry = await listed(editor, repo, sid)
    assert {k: entry["worktree"][k] for k in ("filesChanged", "linesAdded", "linesRemoved")} == {
        "filesChanged": 1, "linesAdded": 3, "linesRemoved": 1}
    assert entry["worktree"]["branch"] == branch

    loaded = await editor.request("agent/session/load", {"sessionId": sid})
    assert loaded["events"][0]["type"]  # found and read through its worktree's host

    # not landed: deleting is refused, nothing is removed
    with pytest.raises(JsonRpcInvalidParams, match="not landed"):
        await editor.request("agent/session/delete", {"sessionId": sid})
    assert worktree.is_dir() and branch in git(repo, "branch", "--list", branch)

    deleted = await editor.request("agent/session/delete", {"sessionId": sid, "force": True})
    assert deleted["deleted"] is True
    assert not worktree.exists() and worktree.resolve() not in worktree_paths(repo)
    assert git(repo, "branch", "--list", branch).strip() == ""
    assert sid not in [s["sessionId"] for s in (await editor.request("agent/session/list", {}))["sessions"]]
    assert (repo / "calc.py").read_text(encoding="utf-8") == ORIGINAL


async def test_a_worktree_sessions_commands_run_in_its_worktree(editor: EditorUnderTest, places):
    repo = places["repo"]
    command = "git rev-parse --abbrev-ref HEAD > branch.txt"
    editor.use_script([{"tools": [{"name": "run_command", "id": "c1", "arguments": {"command": command}}]},
                       {"text": "done"}])
    sid = (await editor.request("agent/session/new", {"workspaceUri": repo.as_uri(), "worktree": True}))["sessionId"]
    before = len(editor.statuses)
    await editor.request("agent/followup", {"sessionId": sid, "content": "which branch?"})
    await editor.wait_idle(sid, before)
    entry = await listed(editor, repo, sid)
    worktree = Path(entry["worktree"]["path"])
    assert (worktree / "branch.txt").read_text().strip() == entry["worktree"]["branch"]
    assert not (repo / "branch.txt").exists()
    assert entry["worktree"]["filesChanged"] == 1
    assert (await editor.request("agent/session/delete", {"sessionId": sid, "force": True}))["deleted"] is True


async def test_an_unchanged_worktree_session_is_deleted_without_force(editor: EditorUnderTest, places):
    repo = places["repo"]
    git(repo, "branch", "-q", "other")
    ref = await editor.request("agent/session/new", {"workspaceUri": repo.as_uri(), "worktree": {"base": "other"},
                                                     "title": "try"})
    entry = await listed(editor, repo, ref["sessionId"])
    assert entry["title"] == "try" and entry["worktree"]["base"] == git(repo, "rev-parse", "other").strip()
    assert (await editor.request("agent/session/delete", {"sessionId": ref["sessionId"]}))["deleted"] is True
    assert not Path(entry["worktree"]["path"]).exists()
    assert git(repo, "branch", "--list", entry["worktree"]["branch"]).strip() == ""


async def test_a_worktree_removed_by_hand_is_still_listed_and_deleted(editor: EditorUnderTest, places):
    repo = places["repo"]
    sid = (await editor.request("agent/session/new", {"workspaceUri": repo.as_uri(), "worktree": True}))["sessionId"]
    entry = await listed(editor, repo, sid)
    git(repo, "worktree", "remove", "--force", entry["worktree"]["path"])
    entry = await listed(editor, repo, sid)
    assert entry["worktree"]["filesChanged"] == 0
    assert (await editor.request("agent/session/delete", {"sessionId": sid}))["deleted"] is True
    assert git(repo, "branch", "--list", entry["worktree"]["branch"]).strip() == ""


async def test_a_folder_outside_git_or_a_base_that_is_no_commit_is_refused(editor: EditorUnderTest, places):
    with pytest.raises(JsonRpcInvalidParams, match="not in a git repository") as refused:
        await editor.request("agent/session/new", {"workspaceUri": places["plain"].as_uri(), "worktree": True})
    assert "Traceback" not in str(refused.value)
    with pytest.raises(JsonRpcInvalidParams, match="no commit named 'nope'"):
        await editor.request("agent/session/new", {"workspaceUri": places["repo"].as_uri(),
                                                   "worktree": {"base": "nope"}})
    assert worktree_paths(places["repo"]) == [places["repo"].resolve()]


async def test_after_a_restart_the_folder_lists_and_continues_its_worktree_session(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "first")
    data, sessions = tmp_path / "data", tmp_path / "sessions"
    sessions.mkdir()
    env = {"XDG_DATA_HOME": str(data)}
    write = {"tools": [{"name": "write_file", "id": "w1", "arguments": {"path": "notes.txt", "content": "a\nb\n"}}]}
    async with running_server(folders=[repo], sessions_dir=sessions, env=env, script=[write, {"text": "ok"}]) as editor:
        sid = (await editor.request("agent/session/new", {"worktree": True}))["sessionId"]
        before = len(editor.statuses)
        await editor.request("agent/followup", {"sessionId": sid, "content": "write notes"})
        await editor.wait_idle(sid, before)
        branch = (await listed(editor, repo, sid))["worktree"]["branch"]
    async with running_server(folders=[repo], sessions_dir=sessions, env=env, script=[{"text": "again"}]) as editor:
        entry = await listed(editor, repo, sid)  # the folder's listing, no worktree host built yet
        assert entry["worktree"]["branch"] == branch
        assert (entry["worktree"]["filesChanged"], entry["worktree"]["linesAdded"]) == (1, 2)
        before = len(editor.statuses)
        await editor.request("agent/followup", {"sessionId": sid, "content": "more"})
        await editor.wait_idle(sid, before)
        assert editor.streamed_text(sid) == "again"
        assert not (repo / "notes.txt").exists()
        assert (await editor.request("agent/session/delete", {"sessionId": sid, "force": True}))["deleted"] is True
        assert worktree_paths(repo) == [repo.resolve()]
