"""A 1,000-hunk edit_file call on a 50,000-line file.

1. In process, through DiskEditor: the tool end to end (locate the 1,000
   oldTexts, build the versioned edit, apply it, diff for the client) and the
   turn revert of that edit.
2. Through the real server (`python -m agent_lsp.lsp`) and the headless client
   (`agent_lsp.cli.client.HeadlessClient`), which applies the
   `workspace/applyEdit` to the file on disk as an editor would: the scripted
   model calls edit_file; the figure is the tool's time from `tool/call` to
   `tool/result` in the session log (locating, the applyEdit round trip with
   1,000 TextEdits, the client applying them), the whole turn as the client
   sees it, and `agent/turn/revert` of that turn.

    .venv/bin/python bench/tools_edit.py [--lines 50000 --hunks 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsprotocol import converters  # noqa: E402

from agent_lsp.agent.ports import TextEdit  # noqa: E402
from agent_lsp.cli.client import HeadlessClient  # noqa: E402
from agent_lsp.cli.transcript import Transcript  # noqa: E402
from agent_lsp.cli.workspace_edit import apply_text_edits  # noqa: E402
from agent_lsp.lsp.editor import wire_text_edits  # noqa: E402
from agent_lsp.tools import build_tools  # noqa: E402
from agent_lsp.tools.edit import locate_edits, unified_diff  # noqa: E402
from agent_lsp.tools.text import line_starts, position_of, replace_spans  # noqa: E402
from agent_lsp.workspace.disk_editor import DiskEditor  # noqa: E402
from agent_lsp.workspace.edit_journal import EditJournal  # noqa: E402


class Ctx:
    call_id, name, turn, step, session_id = "c", "edit_file", 1, 1, "bench"

    class signal:
        aborted, reason = False, None

    def progress(self, data): ...


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--hunks", type=int, default=1_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "big.py"
        text = "".join(f"value_{i} = compute({i}, 'row {i}')\n" for i in range(options.lines))
        path.write_text(text)
        step = options.lines // options.hunks
        edits = [
            {"oldText": f"value_{i} = compute({i},", "newText": f"value_{i} = compute_fast({i},"}
            for i in range(0, options.lines, step)
        ][: options.hunks]

        editor = DiskEditor([root])
        journal = EditJournal()
        tool = {t.name: t for t in build_tools(editor, [root], journal=journal)}["edit_file"]
        args = tool.input_model.model_validate({"path": "big.py", "edits": edits})

        started = time.perf_counter()
        spans = locate_edits(text, args.edits, "big.py")
        located = time.perf_counter()
        new_text = replace_spans(text, spans)
        unified_diff(text, new_text, "big.py")
        diffed = time.perf_counter()
        print(f"file: {options.lines} lines, {len(text) / 1e6:.1f} MB; {len(edits)} hunks in one edit_file call")
        print(f"  locate 1 000 oldTexts        {1000 * (located - started):8.1f} ms")
        print(f"  unified diff for the client  {1000 * (diffed - located):8.1f} ms")

        started = time.perf_counter()
        out = await tool.run(args, Ctx())
        elapsed = time.perf_counter() - started
        assert not out.is_error, out.content[:500]
        assert path.read_text().count("compute_fast(") == len(edits)
        print(f"  edit_file end to end        {1000 * elapsed:8.1f} ms  ({out.content.splitlines()[0]})")

        started = time.perf_counter()
        report = await journal.revert(editor, "bench", 1)
        elapsed = time.perf_counter() - started
        assert path.read_text() == text and report.reverted == [path]
        print(f"  turn revert of that edit     {1000 * elapsed:8.1f} ms")

        # Both ends of the wire, in process: the server converting the edit to
        # UTF-16 TextEdits, the headless client applying them to the text.
        starts = line_starts(text)
        text_edits = tuple(TextEdit(position_of(starts, s), position_of(starts, e), new) for s, e, new in spans)
        unstructure = converters.get_converter().unstructure
        started = time.process_time()
        wire = [unstructure(e) for e in wire_text_edits(text, text_edits, "utf-16")]
        converted = time.process_time()
        assert apply_text_edits(text, wire) == new_text
        applied = time.process_time()
        print(f"  server: edit -> UTF-16 TextEdits  {1000 * (converted - started):6.1f} ms CPU")
        print(f"  client: applies the TextEdits     {1000 * (applied - converted):6.1f} ms CPU")


        await lsp_round_trip(root, text, edits)


async def lsp_round_trip(root: Path, text: str, edits: list[dict]) -> None:
    path = root / "big.py"
    path.write_text(text)
    quiet = Transcript(out=open(os.devnull, "w"), err=open(os.devnull, "w"), color=False)
    script = [
        {"tools": [{"name": "edit_file", "arguments": {"path": "big.py", "edits": edits}}]},
        {"text": "done"},
    ]
    settings = {"model": {"provider": "scripted", "script": script}, "sessionsDir": str(root / "sessions")}
    async with HeadlessClient(root, settings=settings, transcript=quiet) as client:
        started = time.perf_counter()
        result = await client.followup("apply the edits", timeout=120)
        turn = time.perf_counter() - started
        assert result.ok, result.reason
        assert path.read_text().count("compute_fast(") == len(edits), "the client did not apply the edit"
        loaded = await client.request("agent/session/load", {"sessionId": result.session_id})
        times = {e["type"]: e["time"] for e in loaded["events"] if e["type"] in ("tool/call", "tool/result")}
        print("through the server and the headless client (LSP over stdio):")
        print(f"  edit_file tool/call -> tool/result  {times['tool/result'] - times['tool/call']:6d} ms"
              "  (locate, applyEdit round trip, client applies 1 000 TextEdits)")
        print(f"  whole turn as the client sees it    {1000 * turn:6.0f} ms")
        started = time.perf_counter()
        report = await client.request("agent/turn/revert", {"sessionId": result.session_id, "turn": 1})
        elapsed = time.perf_counter() - started
        assert path.read_text() == text and report["skipped"] == [], report
        print(f"  agent/turn/revert of that turn      {1000 * elapsed:6.0f} ms")


if __name__ == "__main__":
    asyncio.run(main())
