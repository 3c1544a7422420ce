"""Project rules and memory through the real server: a path-scoped rule enters
when the agent touches a matching file, once; the memory is read at a
session's start and the agent appends to it through the editor."""

from __future__ import annotations

from lsp_harness import running_server


def entered(editor, sid: str) -> list[tuple[str, str]]:
    messages = [e["data"]["message"] for e in editor.events[sid] if e["type"] == "user/message"]
    return [(m.get("source", "user"), "".join(b.get("text", "") for b in m["content"])) for m in messages]


def read(path: str) -> dict:
    return {"tools": [{"name": "read_file", "arguments": {"path": path}}]}


async def test_rules_enter_when_a_matching_file_is_touched_and_memory_is_kept(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "src" / "api").mkdir(parents=True)
    (workspace / "src" / "api" / "handler.py").write_text("def handle(): ...\n", encoding="utf-8")
    (workspace / "README.md").write_text("readme\n", encoding="utf-8")
    rules = workspace / ".agents" / "rules"
    rules.mkdir(parents=True)
    (rules / "api.md").write_text("---\nglobs: src/api/**\n---\nHandlers validate input with pydantic.\n", encoding="utf-8")
    (rules / "style.md").write_text("Use four spaces.\n", encoding="utf-8")
    (workspace / ".claude" / "rules").mkdir(parents=True)
    (workspace / ".claude" / "rules" / "docs.md").write_text("---\npaths: [docs/**]\n---\nDocs rule.\n", encoding="utf-8")
    memory = workspace / ".agents" / "memory.md"
    memory.write_text("# Project memory\n\n- 2026-01-01: the CI runs on Debian\n", encoding="utf-8")

    script = [
        read("README.md"),
        read("src/api/handler.py"),
        {"tools": [{"name": "remember", "arguments": {"note": "run the tests with   make test"}}]},
        read("src/api/handler.py"),
        {"text": "done"},
    ]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", script=script) as editor:
        sid = (await editor.request("agent/followup", {"content": "fix it"}))["sessionId"]
        await editor.wait_idle(sid)
        texts = entered(editor, sid)
        assert texts[0] == ("user", "fix it")
        first_step = [t for s, t in texts[1:3]]
        assert any("the CI runs on Debian" in t and ".agents/memory.md" in t for t in first_step)
        assert any("Use four spaces." in t for t in first_step)
        api = [i for i, (s, t) in enumerate(texts) if "Handlers validate input with pydantic." in t]
        assert len(api) == 1 and texts[api[0]][0] == "rules"  # entered once, though the file was read twice
        assert api[0] > 2  # after the read of src/api/handler.py, not at the start
        assert not any("Docs rule." in t for _, t in texts)  # nothing under docs/ was touched
        header = next(e["data"]["header"] for e in editor.events[sid] if e["type"] == "request/header")
        assert "Handlers validate" not in str(header.get("system")) and "Debian" not in str(header.get("system"))

        assert memory.read_text(encoding="utf-8").endswith(": run the tests with make test\n")
        assert any(edit.label and "memory.md" in edit.label for edit in editor.applied_edits)  # through the editor

        editor.use_script([{"text": "ok"}])
        before = len(editor.statuses)
        second = (await editor.request("agent/followup", {"content": "next task"}))["sessionId"]
        await editor.wait_idle(second, before)
        assert second != sid
        assert any("run the tests with make test" in t for s, t in entered(editor, second) if s == "rules")
