"""An editor whose language servers do not report on an edit in time (VS Code's
answer for a server that publishes only changed problems): the agent's own
server checks the text before and after the edit instead, and checks that kind
of file itself from then on, through the real server and a real basedpyright."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools_harness import AGENT_PLUGIN, call, run_turn, text_of, tool_server

pytestmark = pytest.mark.slow

LANGUAGE = {"language": {"enabled": True, "waitSeconds": 20},
            "languageServers": {"ruff": {"enabled": False}}}


async def test_an_edit_the_editor_cannot_confirm_is_checked_by_the_agents_own_server(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (root / "calc.py").write_text("def double(x: int) -> int:\n    return x * 2\n\n\nbroken: int = 'one'\n")
    agent = {**AGENT_PLUGIN, "languageQuery": True}
    async with tool_server(folders=[root.resolve()], sessions_dir=tmp_path / "sessions", settings=LANGUAGE,
                           agent=agent) as editor:
        asked: list[dict] = []

        @editor.client.feature("agent/languageQuery")
        def on_language_query(params: dict) -> dict:
            asked.append(params)
            if params["textDocument"]["uri"].endswith(".pyi") and len(asked) > 3:
                raise RuntimeError("the editor's language server crashed")  # an error answer after the edit
            # a server of the editor's that published nothing about this version in time
            return {"servers": ["editor-python"], "pending": True, "files": []}

        _, results = await run_turn(editor, [
            call("edit_file", path="calc.py", edits=[{"oldText": "x * 2", "newText": "y * 2"}]),
            call("edit_file", path="calc.py", edits=[{"oldText": "y * 2", "newText": "x * 3"}]),
            {"text": "done"},
        ])
        edited = text_of(results[0])
        assert "Problems after this change (basedpyright): 1 new error:" in edited, edited
        assert 'calc.py:2:12: error: "y" is not defined' in edited
        assert "1 existing one in this file is not from this change" in edited, "the error that was there before"
        assert [q["kind"] for q in asked] == ["diagnostics", "diagnostics"], "the editor was asked first"

        fixed = text_of(results[1])
        assert "No new problems (basedpyright)." in fixed, fixed
        assert "1 fixed" in fixed
        assert len(asked) == 2, "edits of .py files are checked by the agent's own server from then on"

        # an editor that fails to answer after an edit (another kind of file: the editor is asked first again)
        (root / "calc.pyi").write_text("def double(x: int) -> int: ...\n")
        _, results = await run_turn(editor, [
            call("edit_file", path="calc.pyi", edits=[{"oldText": "x: int)", "newText": "x: Missing)"}]),
            {"text": "done"},
        ])
        stub = text_of(results[0])
        assert len(asked) == 4, asked
        assert "Problems after this change (basedpyright):" in stub, stub
        assert 'calc.pyi:1:15: error: "Missing" is not defined' in stub, stub
