"""The real server for the sandbox's tests, a hook before every command, and one scripted turn."""

from __future__ import annotations

from sandbox_places import Places
from tools_harness import tool_server


def server(places: Places, **env: str):
    # a hook before every command: it runs in the commands' sandbox
    hook = f"touch hook-ran; touch {places.outside}/hook-escaped; exit 0"
    hooks = {"PreToolUse": [{"matcher": "run_command", "hooks": [{"type": "command", "command": hook}]}]}
    return tool_server(folders=[places.workspace], sessions_dir=places.root / "sessions",
                       settings={"permissions": {"sandboxedCommands": "allow"}, "hooks": hooks},
                       env={"HOME": str(places.home), "TMPDIR": str(places.temp), **env})


async def turn(editor, steps: list[dict], shell: dict | None = None, session_id: str | None = None):
    """One turn of the scripted model (and these `shell` settings); the session and its tool results."""
    editor.configure({"model": {"provider": "scripted", "script": [*steps, {"text": "done"}]}, "shell": shell or {}})
    before = len(editor.statuses)
    params = {"content": "go", **({"sessionId": session_id} if session_id else {})}
    sid = (await editor.request("agent/followup", params))["sessionId"]
    seen = len(editor.events[sid]) if session_id else 0
    await editor.wait_idle(sid, before)
    await editor.wait_for(lambda: editor.event_types(sid)[-1:] == ["turn/end"], what="turn/end")
    return sid, [e["data"] for e in editor.events[sid][seen:] if e["type"] == "tool/result"]
