"""A 1,000-hunk edit_file call on a 50,000-line file, applied through DiskEditor.

Measures the tool end to end (locate the 1,000 oldTexts, build the versioned
edit, apply it, diff for the client) and the turn revert of that edit. The
LSP round trip (workspace/applyEdit to a real client) is measured by the
server benchmarks.

    .venv/bin/python bench/tools_edit.py [--lines 50000 --hunks 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_lsp.tools import build_tools  # noqa: E402
from agent_lsp.tools.edit import apply_spans, locate_edits, unified_diff  # noqa: E402
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
        new_text = apply_spans(text, spans)
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


if __name__ == "__main__":
    asyncio.run(main())
