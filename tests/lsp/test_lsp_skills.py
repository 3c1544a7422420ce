"""Skills through the real server: listed to the model and to clients, loaded
by the model through the `skill` tool, invoked by the user."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_harness import running_server


def write_skill(folder, name: str, description: str, body: str, files: dict[str, str] | None = None):
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")
    for relative, text in (files or {}).items():
        (folder / name / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / name / relative).write_text(text, encoding="utf-8")


def skill_call(**arguments) -> dict:
    return {"tools": [{"name": "skill", "arguments": arguments}]}


def results(editor, sid: str) -> list[dict]:
    return [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]


def text(result: dict) -> str:
    return "".join(b.get("text", "") for b in result["message"]["content"])


@pytest.fixture
def folders(tmp_path):
    workspace, home = tmp_path / "ws", tmp_path / "home"
    write_skill(workspace / ".claude" / "skills", "release", "an older release skill", "OLD STEPS")
    write_skill(workspace / ".agents" / "skills", "release", "How to cut a release of this project",
                "1. Bump the version.\n2. Follow checklist.md.", {"checklist.md": "- changelog updated\n"})
    (tmp_path / "secret.txt").write_text("not for the model", encoding="utf-8")
    write_skill(home / ".config" / "agent-lsp" / "skills", "greet", "Greets someone warmly", "Say hello by name.")
    return workspace, home


async def test_a_skill_is_listed_loaded_and_its_files_read_only_inside_its_folder(tmp_path, folders):
    workspace, home = folders
    script = [
        skill_call(name="release"),
        skill_call(name="release", file="checklist.md"),
        skill_call(name="release", file="../../../../secret.txt"),
        skill_call(name="deploy"),
        {"text": "released"},
    ]
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script, env=env) as editor:
        listed = await editor.raw_request("agent/skill/list", {})
        shown = {s["name"]: s for s in listed["skills"]}
        assert set(shown) == {"release", "greet"}
        assert shown["release"]["source"] == "project" and shown["release"]["description"] == "How to cut a release of this project"
        assert shown["greet"]["source"] == "user" and shown["release"]["path"].endswith(".agents/skills/release/SKILL.md")

        sid = (await editor.request("agent/followup", {"content": "cut a release"}))["sessionId"]
        await editor.wait_idle(sid)
        header = next(e["data"]["header"] for e in editor.events[sid] if e["type"] == "request/header")
        (spec,) = [t for t in header["tools"] if t["name"] == "skill"]
        assert "- release: How to cut a release of this project" in spec["description"]
        assert "- greet: Greets someone warmly" in spec["description"]
        loaded, checklist, outside, unknown = results(editor, sid)
        assert "1. Bump the version." in text(loaded) and "checklist.md" in text(loaded) and "OLD STEPS" not in text(loaded)
        assert text(checklist) == "- changelog updated\n"
        assert outside["message"]["isError"] and "outside the folder of skill 'release'" in text(outside)
        assert "not for the model" not in text(outside)
        assert unknown["message"]["isError"] and "no skill named 'deploy'" in text(unknown)


async def test_the_user_invokes_a_skill_as_a_command(tmp_path, folders):
    workspace, home = folders
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=[{"text": "Hello, Bob!"}], env=env) as editor:
        ref = await editor.raw_request("agent/skill/run", {"name": "greet", "arguments": "for Bob"})
        await editor.wait_idle(ref["sessionId"])
        (entered,) = [e["data"]["message"] for e in editor.events[ref["sessionId"]] if e["type"] == "user/message"]
        assert entered["id"] == ref["messageId"]
        body = "".join(b["text"] for b in entered["content"])
        assert "Say hello by name." in body and body.endswith("for Bob")
        assert entered["note"] == {"kind": "skill", "text": "/greet for Bob"}  # what clients show instead
        assert editor.streamed_text(ref["sessionId"]) == "Hello, Bob!"

        with pytest.raises(JsonRpcInvalidParams, match="no skill named 'nope'"):
            await editor.command("agentLsp.runSkill", "nope")
