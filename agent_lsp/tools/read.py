"""read_file: the text the user sees (open buffer first, else disk), with line numbers."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.agent.ports import ToolContext, ToolOutput
from agent_lsp.tools.base import BuiltinTool, ToolError, ToolInput, read_text
from agent_lsp.tools.text import split_lines

MAX_LINES = 2000
MAX_CHARS = 100_000
MAX_LINE_CHARS = 2000


class ReadFileInput(ToolInput):
    path: str
    start_line: int | None = Field(default=None, ge=1, description="first line to read")
    end_line: int | None = Field(default=None, ge=1, description="last line to read, inclusive")


class ReadFile(BuiltinTool):
    name = "read_file"
    description = (
        "Read a text file with numbered lines (1-based). A long file is cut with a note saying which "
        "lines to ask for next."
    )
    input_model = ReadFileInput
    parallel = True

    async def execute(self, args: ReadFileInput, ctx: ToolContext) -> ToolOutput:
        path = self.env.resolve(args.path)
        shown = self.env.show(path)
        file = read_text(self.env, path, shown)
        if self.env.language is not None:
            self.env.language.touch(path)  # its language server gets ready for the edits that may follow
        lines = split_lines(file.text)
        total = len(lines)
        start = args.start_line or 1
        if total == 0:
            return ToolOutput(content=f"{shown} is empty.", meta={"path": shown, "totalLines": 0})
        if start > total:
            raise ToolError(f"startLine {start} is past the end of {shown} ({total} lines)", "BAD_RANGE")
        last = min(args.end_line or total, total)
        if last < start:
            raise ToolError(f"endLine {last} is before startLine {start}", "BAD_RANGE")

        width = len(str(last))
        out: list[str] = []
        size = 0
        shown_last = start - 1
        for number in range(start, last + 1):
            line = lines[number - 1]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"
            row = f"{number:>{width}}\t{line}"
            if number - start >= MAX_LINES or size + len(row) > MAX_CHARS:
                break
            out.append(row)
            size += len(row) + 1
            shown_last = number

        notes = []
        if shown_last < last:
            next_last = min(last, shown_last + (shown_last - start + 1))
            notes.append(
                f"[truncated: showed lines {start}-{shown_last} of {total}; ask for lines "
                f"{shown_last + 1}-{next_last} with startLine/endLine]"
            )
        elif last < total:
            notes.append(f"[lines {start}-{last} of {total}]")
        if file.lossy:
            notes.append("[the file is not valid UTF-8: undecodable bytes are shown as \ufffd]")
        content = "\n".join(out + notes)
        meta = {
            "path": shown,
            "startLine": start,
            "endLine": shown_last,
            "totalLines": total,
            "fromBuffer": file.is_open,
        }
        return ToolOutput(content=content, meta=meta)
