"""User hooks through the real server: commands on the agent's lifecycle points,
configured in the settings (the user's) or in a project file (asked once)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import psutil
from lsp_harness import running_server

RUN_ECHO = [{"tools": [{"name": "run_command", "arguments": {"command": "echo ran-the-command"}}]}, {"text": "done"}]


def hook_script(folder: Path, name: str, body: str) -> str:
    """A Python hook; its stdin (the event's JSON) is saved beside it as <name>.json."""
    path = folder / f"{name}.py"
    path.write_text(
        "import json, sys\n"
        f"data = json.load(sys.stdin)\nopen({str(folder / (name + '.json'))!r}, 'w').write(json.dumps(data))\n"
        + textwrap.dedent(body),
        encoding="utf-8",
    )
    return f"{sys.executable} {path}"


def hooks(event: str, command: str, matcher: str | None = None, timeout: float | None = None) -> dict:
    entry: dict = {"type": "command", "command": command}
    if timeout is not None:
        entry["timeout"] = timeout
    group: dict = {"hooks": [entry]}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def of_type(editor, sid: str, kind: str) -> list[dict]:
    return [e["data"] for e in editor.events[sid] if e["type"] == kind]


def result_text(result: dict) -> str:
    return "".join(b.get("text", "") for b in result["message"]["content"])


async def test_a_pre_tool_hook_blocks_run_command_with_a_reason_the_model_reads(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = hook_script(tmp_path, "guard", """
        if data["tool_input"]["command"].startswith("echo"):
            print("echo is not allowed in this repository", file=sys.stderr)
            sys.exit(2)
    """)
    settings = {"hooks": hooks("PreToolUse", command, matcher="Bash")}  # Claude Code's name of run_command
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=RUN_ECHO, settings=settings) as editor:
        sid = (await editor.request("agent/followup", {"content": "run it"}))["sessionId"]
        await editor.wait_idle(sid)
        (result,) = of_type(editor, sid, "tool/result")
        assert result["message"]["isError"]
        assert "echo is not allowed in this repository" in result_text(result)
        assert "ran-the-command" not in result_text(result)
        assert editor.permission_requests == []  # blocked before the user was asked
        seen = json.loads((tmp_path / "guard.json").read_text())
        assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "run_command"
        assert seen["session_id"] == sid and seen["cwd"] == str(workspace.resolve())
        assert Path(seen["transcript_path"]).is_file()
        (record,) = of_type(editor, sid, "hook/run")
        assert record["outcome"] == "blocked" and record["event"] == "PreToolUse"
        assert of_type(editor, sid, "turn/end")[-1]["reason"]["kind"] == "completed"


async def test_a_hanging_hook_is_killed_at_its_timeout_and_a_crashing_one_does_not_break_the_turn(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pids = tmp_path / "pids"
    hanging = f"sleep 300.25 & echo $! > {pids}; echo $$ >> {pids}; wait"
    crashing = hook_script(tmp_path, "crash", "raise RuntimeError('hook bug')\n")
    settings = {"hooks": {"PreToolUse": [
        {"matcher": "run_command", "hooks": [{"type": "command", "command": hanging, "timeout": 1}]},
        {"hooks": [{"type": "command", "command": crashing}]},
    ]}}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=RUN_ECHO, settings=settings) as editor:
        sid = (await editor.request("agent/followup", {"content": "run it"}))["sessionId"]
        await editor.wait_idle(sid)
        (result,) = of_type(editor, sid, "tool/result")
        assert "ran-the-command" in result_text(result)  # both hooks failed: the call went on
        records = {r["outcome"]: r for r in of_type(editor, sid, "hook/run")}
        assert set(records) == {"timeout", "failed"}
        assert "within 1 s" in records["timeout"]["message"]
        assert "hook bug" in records["failed"]["message"] and records["failed"]["exitCode"] == 1
        # the hook and what it started, by command line (in the sandbox the pids it saw are its own)
        assert pids.read_text().split() and not _running("sleep", "300.25")


async def test_prompt_stop_and_session_hooks_add_context_and_continue_the_turn(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    once = tmp_path / "continued"
    stop = hook_script(tmp_path, "stop", f"""
        import os
        if not os.path.exists({str(once)!r}):
            open({str(once)!r}, "w").close()
            print(json.dumps({{"decision": "block", "reason": "the tests were not run yet"}}))
    """)
    settings = {"hooks": {
        **hooks("UserPromptSubmit", hook_script(tmp_path, "prompt", 'print("the user prefers tabs")\n')),
        **hooks("SessionStart", hook_script(tmp_path, "start", 'print(json.dumps({"additionalContext": "branch: main"}))\n')),
        **hooks("Stop", stop),
    }}
    script = [{"text": "first answer"}, {"text": "ran the tests"}]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script, settings=settings) as editor:
        sid = (await editor.request("agent/followup", {"content": "fix it"}))["sessionId"]
        await editor.wait_idle(sid)
        assert editor.streamed_text(sid) == "first answerran the tests"  # the Stop hook continued the turn once
        entered = [m["message"] for m in of_type(editor, sid, "user/message")]
        texts = [(m.get("source"), "".join(b["text"] for b in m["content"])) for m in entered]
        assert texts[0] == ("user", "fix it")
        assert ("hook", "SessionStart hook context:\nbranch: main") in texts
        assert ("hook", "UserPromptSubmit hook context:\nthe user prefers tabs") in texts
        assert any(source == "hook" and "the tests were not run yet" in text for source, text in texts[3:])
        assert json.loads((tmp_path / "prompt.json").read_text())["prompt"] == "fix it"
        assert json.loads((tmp_path / "stop.json").read_text())["stop_hook_active"] is True  # its second call
        # every hook that ran is recorded for the clients, allowed ones too
        ran = [(r["event"], r["outcome"]) for r in of_type(editor, sid, "hook/run")]
        assert ran == [("SessionStart", "allowed"), ("UserPromptSubmit", "allowed"), ("Stop", "blocked"), ("Stop", "allowed")]


async def test_project_hooks_run_only_once_the_user_trusts_them(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".claude").mkdir(parents=True)
    marker = tmp_path / "project-hook-ran"
    project = {"hooks": hooks("PostToolUse", f"touch {marker}; echo '{{\"additionalContext\": \"lint: clean\"}}'")}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(project), encoding="utf-8")
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=RUN_ECHO) as editor:
        editor.permission_answer = "deny"
        sid = (await editor.request("agent/followup", {"content": "run it"}))["sessionId"]
        await editor.wait_idle(sid)
        assert not marker.exists()
        (asked,) = [r for r in editor.permission_requests if r.get("tool") == "project_hooks"]
        assert ".claude/settings.json" in asked["title"] and str(marker) in asked["detail"]

        editor.permission_answer = "always"
        editor.use_script([*RUN_ECHO[:1], {"text": "second"}])  # new settings: hooks read and asked about again
        before = len(editor.statuses)
        sid = (await editor.request("agent/followup", {"content": "run it"}))["sessionId"]
        await editor.wait_idle(sid, before)
        assert marker.exists()
        texts = ["".join(b["text"] for b in m["message"]["content"]) for m in of_type(editor, sid, "user/message")]
        assert "lint: clean" in texts

        marker.unlink()
        editor.permission_requests.clear()
        editor.use_script([*RUN_ECHO[:1], {"text": "third"}])
        before = len(editor.statuses)
        sid = (await editor.request("agent/followup", {"content": "again"}))["sessionId"]
        await editor.wait_idle(sid, before)
        assert marker.exists()
        assert not [r for r in editor.permission_requests if r.get("tool") == "project_hooks"]  # "always" was kept


def _running(*argv: str) -> list[int]:
    """Pids of the live (not zombie) processes with exactly this command line."""
    return [p.pid for p in psutil.process_iter(["cmdline", "status"])
            if p.info["cmdline"] == list(argv) and p.info["status"] != psutil.STATUS_ZOMBIE]
