"""language: what the language servers know, as one tool with an operation.

One tool, not seven: every tool schema is paid on every request, and local
models run small windows. A symbol is addressed by file + line + its name on
that line (what models get right), or file + line + column.

`rename` and `fix` change files: the server computes the edits, and they reach
the editor as ONE `workspace/applyEdit` (one undo step in every file), checked
against the buffers' versions, journaled for turn revert and held for review
like every agent edit; the result ends with the problems the change added.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from agent_lsp.agent.ports import PermissionRequest, ToolContext, ToolOutput
from agent_lsp.tools.base import BuiltinTool, ToolError, ToolInput, read_text
from agent_lsp.tools.edit import unsaved_note
from agent_lsp.tools.language_edits import apply_file_edits
from agent_lsp.tools.language_port import FileEdits, Location, NoLanguageServer, Symbol
from agent_lsp.tools.problems import MAX_LISTED, problems_before, with_problems

MAX_RESULTS = 60
MAX_HOVER_CHARS = 3000
Operation = Literal["diagnostics", "definition", "references", "hover", "symbols", "rename", "fix"]


class LanguageInput(ToolInput):
    # Empty strings and zeros stand for "not given".
    operation: Operation = Field(description=(
        "diagnostics (of path: file or folder; none: workspace), definition, references, hover, "
        "symbols (of path; or query: workspace), rename (to newName), fix (quick fixes of line; fix=N applies one)"))
    path: str = ""
    line: int = Field(default=0, ge=0, description="1-based")
    symbol: str = Field(default="", description="the symbol's name on that line")
    column: int = Field(default=0, ge=0, description="1-based, instead of symbol")
    query: str = ""
    new_name: str = ""
    fix: int = Field(default=0, ge=0)
    severity: Literal["error", "warning", "information", "hint"] = Field(default="warning", description="at least")


class LanguageTool(BuiltinTool):
    name = "language"
    description = ("Ask the language servers (type checkers, linters): problems, definitions, references, "
                   "types, symbols; rename a symbol everywhere; quick fixes.")
    input_model = LanguageInput

    def is_parallel(self, args: LanguageInput) -> bool:  # type: ignore[override]
        return args.operation not in ("rename", "fix")

    async def execute(self, args: LanguageInput, ctx: ToolContext) -> ToolOutput:
        language = self.env.language
        if language is None:
            raise ToolError("no language servers are used here (the language.enabled setting)", "NO_LANGUAGE_SERVER")
        try:
            if args.operation == "diagnostics":
                return await self._diagnostics(args)
            if args.operation == "symbols" and not args.path:
                if not args.query:
                    raise ToolError("symbols needs a path (a file's outline) or a query (workspace)", "BAD_ARGUMENTS")
                return _symbols_output(await language.workspace_symbols(args.query), self.env.show, f"'{args.query}'")
            path = self._file(args)
            if args.operation == "symbols":
                return _symbols_output(await language.document_symbols(path), self.env.show, self.env.show(path))
            if args.operation == "fix":
                return await self._fix(args, path, ctx)
            position = self._position(args, path)
            if args.operation == "definition":
                return _locations_output(await language.definition(path, position), self.env.show, "definition")
            if args.operation == "references":
                return _locations_output(await language.references(path, position), self.env.show, "reference")
            if args.operation == "hover":
                text = await language.hover(path, position)
                return ToolOutput(content=(text or "The server has nothing to show here.")[:MAX_HOVER_CHARS])
            if not args.new_name:
                raise ToolError("rename needs newName", "BAD_ARGUMENTS")
            edits = await language.rename(path, position, args.new_name)
            if not edits:
                raise ToolError("the language server found nothing to rename there", "NOTHING_TO_RENAME")
            return await self._apply(ctx, edits, f"rename to {args.new_name}")
        except NoLanguageServer as error:
            raise ToolError(str(error), "NO_LANGUAGE_SERVER") from None

    def _file(self, args: LanguageInput) -> Path:
        if not args.path:
            raise ToolError(f"{args.operation} needs a path", "BAD_ARGUMENTS")
        path = self.env.resolve(args.path)
        if not path.is_file() and self.env.editor.document(path) is None:
            raise ToolError(f"'{self.env.show(path)}' is not a file", "NOT_FOUND")
        return path

    def _position(self, args: LanguageInput, path: Path) -> tuple[int, int]:
        if not args.line:
            raise ToolError(f"{args.operation} needs a line (and the symbol's name on it)", "BAD_ARGUMENTS")
        lines = read_text(self.env, path, self.env.show(path)).text.splitlines()
        if args.line > len(lines):
            raise ToolError(f"{self.env.show(path)} has {len(lines)} lines", "BAD_ARGUMENTS")
        text = lines[args.line - 1]
        if args.column:
            return args.line - 1, min(args.column - 1, len(text))
        if not args.symbol:
            raise ToolError("name the symbol on that line (symbol) or give its column", "BAD_ARGUMENTS")
        match = re.search(rf"(?<!\w){re.escape(args.symbol)}(?!\w)", text) or re.search(re.escape(args.symbol), text)
        if match is None:
            raise ToolError(f"'{args.symbol}' is not on line {args.line} of {self.env.show(path)}: {text.strip()[:120]}",
                            "SYMBOL_NOT_FOUND")
        return args.line - 1, match.start()

    async def _diagnostics(self, args: LanguageInput) -> ToolOutput:
        assert self.env.language is not None
        target = self.env.resolve(args.path or None, default_root=True)
        if not target.is_dir() and not self.env.language.serves(target):
            raise NoLanguageServer(f"no language server for {target.suffix or target.name} files here; "
                                   "run the project's checker with run_command instead")
        found = await self.env.language.diagnostics([target], args.severity)
        problems = [p for path in sorted(found) for p in found[path]]
        where = self.env.show(target) if args.path else "the workspace"
        if not problems:
            return ToolOutput(content=f"No problems in {where} (at least {args.severity}).",
                              meta={"problems": {"count": 0}})
        lines = [f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {where}:"]
        for p in problems[:MAX_RESULTS]:
            code = f" [{p.code}]" if p.code else ""
            lines.append(f"{self.env.show(p.path)}:{p.line + 1}:{p.character + 1}: {p.severity}: {' '.join(p.message.split())}{code}")
        if len(problems) > MAX_RESULTS:
            lines.append(f"… and {len(problems) - MAX_RESULTS} more; ask for one file or a higher severity")
        return ToolOutput(content="\n".join(lines), meta={"problems": {"count": len(problems)}})

    async def _fix(self, args: LanguageInput, path: Path, ctx: ToolContext) -> ToolOutput:
        assert self.env.language is not None
        if not args.line:
            raise ToolError("fix needs the line of the problem", "BAD_ARGUMENTS")
        actions = await self.env.language.code_actions(path, args.line - 1)
        if not actions:
            return ToolOutput(content=f"No quick fixes for line {args.line} of {self.env.show(path)}.")
        if not args.fix:
            listed = [f"{n}. {a.title}" + (f" ({a.kind})" if a.kind else "") for n, a in enumerate(actions[:MAX_LISTED], 1)]
            return ToolOutput(content=f"Quick fixes for line {args.line} (apply one with fix=N):\n" + "\n".join(listed))
        if args.fix > len(actions):
            raise ToolError(f"there are {len(actions)} quick fixes for that line", "BAD_ARGUMENTS")
        action = actions[args.fix - 1]
        return await self._apply(ctx, list(action.edits), action.title)

    async def _apply(self, ctx: ToolContext, edits: list[FileEdits], what: str) -> ToolOutput:
        paths = [e.path for e in edits]
        for path in paths:
            self.env.roots.resolve(str(path))  # raises for a file outside the workspace
        shown = ", ".join(self.env.show(p) for p in paths)
        await self.env.authorize(ctx, PermissionRequest(tool=self.name, title=f"{what.capitalize()} in {shown}",
                                                        kind="write", path=paths[0], detail=shown))
        checked = await problems_before(self.env.edit_language, paths)
        applied = await apply_file_edits(self.env, ctx, edits, f"agent: {what}")
        count = sum(len(e.edits) for e in edits)
        summary = f"Applied {what}: {count} edit{'s' if count != 1 else ''} in {len(edits)} file{'s' if len(edits) != 1 else ''} ({shown})."
        if applied.pending:
            summary += " The change waits in the editor for the user's review."
        elif applied.unsaved:
            summary += " " + unsaved_note([self.env.show(p) for p in applied.unsaved])
        output = ToolOutput(content=summary, meta={"paths": [self.env.show(p) for p in paths], "journal": applied.records})
        return await with_problems(self.env.edit_language, checked, applied.texts, output, self.env.show)


class LanguageReader(LanguageTool):
    """The language tool for read-only sub-agents: every question, no rename or fix."""

    def is_parallel(self, args: LanguageInput) -> bool:  # type: ignore[override]
        return True

    async def execute(self, args: LanguageInput, ctx: ToolContext) -> ToolOutput:
        if args.operation in ("rename", "fix"):
            raise ToolError(f"{args.operation} changes files, which this read-only agent does not do; "
                            "report what should change instead", "READ_ONLY")
        return await super().execute(args, ctx)


def _locations_output(found: list[Location], show, what: str) -> ToolOutput:
    if not found:
        return ToolOutput(content=f"No {what} found.")
    lines = [f"{len(found)} {what}{'s' if len(found) != 1 else ''}:"]
    for location in found[:MAX_RESULTS]:
        lines.append(f"{show(location.path)}:{location.line + 1}:{location.character + 1}: {location.line_text[:160]}")
    if len(found) > MAX_RESULTS:
        lines.append(f"… and {len(found) - MAX_RESULTS} more")
    return ToolOutput(content="\n".join(lines))


def _symbols_output(found: list[Symbol], show, where: str) -> ToolOutput:
    if not found:
        return ToolOutput(content=f"No symbols in {where}.")
    lines = [f"Symbols in {where}:"]
    for symbol in found[:MAX_RESULTS * 2]:
        at = f"{show(symbol.path)}:{symbol.line + 1}" if symbol.depth == 0 and where.startswith("'") else f"line {symbol.line + 1}"
        lines.append(f"{'  ' * symbol.depth}{symbol.name} ({symbol.kind.lower()}) {at}")
    return ToolOutput(content="\n".join(lines))
