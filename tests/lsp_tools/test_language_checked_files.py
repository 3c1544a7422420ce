"""An editor that says which other files it checked in full for a diagnostics
answer (VS Code checks the importers of the edited file with its TypeScript
server, opening them unseen): a caller's error is new when the caller was
checked clean before the edit too, and is not called new when it was checked
only after it."""

from __future__ import annotations

from pathlib import Path

from tools_harness import AGENT_PLUGIN, call, run_turn, text_of, tool_server

LANGUAGE = {"language": {"enabled": True, "discovery": False, "waitSeconds": 5}}
ARITY = {"range": {"start": {"line": 2, "character": 19}, "end": {"line": 2, "character": 29}},
         "severity": 1, "message": "Expected 2 arguments, but got 1.", "source": "ts", "code": 2554}


async def test_a_callers_error_is_new_only_when_the_caller_was_checked_before_the_edit_too(tmp_path: Path):
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.ts").write_text("export function greet(name: string): string {\n  return name;\n}\n")
    caller = root / "e.ts"
    caller.write_text("import { greet } from './a';\n\nexport const fromE = greet('e');\n")
    checked_before: list[list[str]] = [[caller.as_uri()], []]  # the first edit's search found e.ts in time, the second's did not
    agent = {**AGENT_PLUGIN, "languageQuery": True}
    async with tool_server(folders=[root], sessions_dir=tmp_path / "sessions", settings=LANGUAGE, agent=agent) as editor:
        asked: list[dict] = []

        @editor.client.feature("agent/languageQuery")
        def on_language_query(params: dict) -> dict:
            asked.append(params)
            edited = {"uri": params["textDocument"]["uri"], "diagnostics": []}
            if len(asked) % 2:  # before the edit: e.ts checked clean, or not checked
                return {"servers": ["ts"], "files": [edited], "checked": checked_before[len(asked) // 2]}
            return {"servers": ["ts"], "files": [edited, {"uri": caller.as_uri(), "diagnostics": [ARITY]}],
                    "checked": [caller.as_uri()]}

        _, results = await run_turn(editor, [
            call("edit_file", path="a.ts", edits=[{"oldText": "greet(name: string)", "newText": "greet(name: string, times: number)"}]),
            call("edit_file", path="a.ts", edits=[{"oldText": "return name;", "newText": "return name.repeat(times);"}]),
            {"text": "done"},
        ])
        first, second = text_of(results[0]), text_of(results[1])
        assert [q["kind"] for q in asked] == ["diagnostics"] * 4 and all(q["everywhere"] for q in asked)
        assert "Problems after this change (ts): 1 new error:\n  e.ts:3:20: error: Expected 2 arguments, but got 1." in first, first
        assert "Problems after this change (ts): 1 error (the problems before this change were not known" in second, second
