"""The problems an edit added, at the end of the edit's own result.

    token = await problems_before(language, [path])       # before the edit is applied
    ...apply...
    output = await with_problems(language, token, {path: new_text}, output, show)

The language port waits for the servers' diagnostics of the new text (bounded);
the model reads the new errors and warnings with file, line and message, how
many were fixed, and how many were there already. The same summary is in the
result's meta["problems"] for the clients' tool cards and the session log.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from agent_lsp.agent.ports import ToolOutput
from agent_lsp.tools.language_port import LanguageIntelligence, Problem, ProblemReport

MAX_LISTED = 20


async def problems_before(language: LanguageIntelligence | None, paths: list[Path]) -> Any:
    if language is None or not any(language.serves(p) for p in paths):
        return None
    return await language.before_change(paths)


async def with_problems(language: LanguageIntelligence | None, token: Any, changed: dict[Path, str | None],
                        output: ToolOutput, show: Callable[[Path], str]) -> ToolOutput:
    if language is None or token is None or output.is_error:
        return output
    report = await language.after_change(token, changed)
    if report is None:
        return output
    text = describe(report, show, single_file=len(changed) == 1)
    content = output.content if isinstance(output.content, str) else ""
    meta = {**(output.meta or {}), "problems": report_json(report, show)}
    return replace(output, content=f"{content.rstrip()}\n\n{text}", meta=meta)


def describe(report: ProblemReport, show: Callable[[Path], str], single_file: bool = True) -> str:
    by = f" ({', '.join(report.servers)})" if report.servers else ""
    if report.unknown:
        return f"Problems after this change are unknown{by}: {report.unknown}."
    here = "this file" if single_file else "the changed files"
    lines = []
    if report.added:
        errors = sum(p.severity == "error" for p in report.added)
        warnings = len(report.added) - errors
        counts = ", ".join(f"{n} new {word}{'s' if n != 1 else ''}" for n, word in
                           ((errors, "error"), (warnings, "warning")) if n)
        if report.baseline_missing:
            counts = counts.replace(" new ", " ") + " (the problems before this change were not known, so some may be older)"
        lines.append(f"Problems after this change{by}: {counts}:")
        for problem in report.added[:MAX_LISTED]:
            lines.append("  " + _line(problem, show))
        if len(report.added) > MAX_LISTED:
            lines.append(f"  … and {len(report.added) - MAX_LISTED} more (the language tool lists them all)")
    elif report.incomplete:
        lines.append(f"No new problems found so far{by}.")
    else:
        lines.append(f"No new problems{by}.")
    notes = []
    if report.fixed:
        notes.append(f"{report.fixed} fixed")
    if report.existing:
        notes.append(f"{report.existing} existing one{'s' if report.existing != 1 else ''} in {here} "
                     f"{'are' if report.existing != 1 else 'is'} not from this change")
    if notes:
        lines.append("; ".join(notes).capitalize() + ".")
    if report.incomplete:
        lines.append(f"Not complete: {report.incomplete}.")
    return "\n".join(lines)


def _line(problem: Problem, show: Callable[[Path], str]) -> str:
    code = f" [{problem.code}]" if problem.code else ""
    source = f" ({problem.source})" if problem.source and not problem.code else ""
    message = " ".join(problem.message.split())  # servers write notes on lines of their own
    return f"{show(problem.path)}:{problem.line + 1}:{problem.character + 1}: {problem.severity}: {message}{code}{source}"


def report_json(report: ProblemReport, show: Callable[[Path], str]) -> dict[str, Any]:
    return {
        "servers": report.servers,
        "added": [{"path": show(p.path), "line": p.line, "character": p.character, "severity": p.severity,
                   "message": p.message, "source": p.source, "code": p.code} for p in report.added],
        "fixed": report.fixed,
        "existing": report.existing,
        "unknown": report.unknown,
        "incomplete": report.incomplete,
        "waitedMs": report.waited_ms,
    }


def difference(before: list[Problem], after: list[Problem]) -> tuple[list[Problem], int, int]:
    """Errors and warnings in `after` not in `before` (as many as there are more of
    each, matched by `Problem.key`), how many of `before`'s are gone, and how many stayed."""
    def counted(problems: list[Problem]) -> list[Problem]:
        return [p for p in problems if p.severity in ("error", "warning")]

    remaining: dict[tuple, int] = {}
    for problem in counted(before):
        remaining[problem.key()] = remaining.get(problem.key(), 0) + 1
    added, kept = [], 0
    for problem in counted(after):
        if remaining.get(problem.key(), 0) > 0:
            remaining[problem.key()] -= 1
            kept += 1
        else:
            added.append(problem)
    return added, sum(remaining.values()), kept
