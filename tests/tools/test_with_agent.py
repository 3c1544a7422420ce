"""The tools driven by the real agent loop and the scripted model: a turn that
reads, searches, edits and runs a command, then is reverted."""

import shlex
import sys
from pathlib import Path

from agent_lsp.agent.events import only
from agent_lsp.agent import Agent, AgentOptions, ToolRegistry
from agent_lsp.llm.scripted import ScriptedProvider
from agent_lsp.store import SessionStore
from agent_lsp.tools import build_tools
from agent_lsp.workspace.disk_editor import DiskEditor
from agent_lsp.workspace.edit_journal import EditJournal

PYTHON = shlex.quote(sys.executable)


async def test_a_turn_reads_edits_runs_and_reverts(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    journal, editor = EditJournal(), DiskEditor([ws])
    script = [
        {"tools": [{"name": "read_file", "arguments": {"path": "calc.py"}},
                   {"name": "grep", "arguments": {"pattern": "return"}}]},
        {"tools": [{"name": "edit_file",
                    "arguments": {"path": "calc.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}}]},
        {"tools": [{"name": "run_command",
                    "arguments": {"command": f"{PYTHON} -c 'import calc; print(calc.add(2, 3))'"}}]},
        {"text": "fixed"},
    ]  # fmt: skip
    session = SessionStore(tmp_path / "sessions").create()
    agent = Agent(
        session,
        providers={"scripted": ScriptedProvider(script)},
        tools=ToolRegistry(build_tools(editor, [ws], journal=journal)),
        options=AgentOptions(provider="scripted", model="scripted"),
    )
    progress = []
    agent.subscribe(only("agent/tool/progress", progress.append))
    agent.followup("fix add")
    await agent.when_idle()
    results = {e.data["name"]: e.data["message"] for e in session.events if e.type == "tool/result"}
    assert not any(m["isError"] for m in results.values()), results
    assert results["read_file"]["content"][0]["text"] == "1\tdef add(a, b):\n2\t    return a - b"
    assert results["grep"]["content"][0]["text"] == "calc.py\n2:    return a - b"
    assert results["run_command"]["content"][0]["text"] == "5\n[exit code 0]"
    assert {p["data"]["stream"] for p in progress} == {"stdout"}
    assert "".join(p["data"]["text"] for p in progress) == "5\n"  # streamed as it ran

    report = await journal.revert(editor, session.id, 1)
    assert report.reverted == [ws / "calc.py"]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    await agent.dispose()
