"""Printing a session for a person at a terminal: assistant text as it
streams, tool calls as one-line summaries, problems on stderr.

Fed with durable session events ({seq, time, type, data}) exactly as they
arrive in `session/event` notifications, or as `agent/session/load` replays
them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, TextIO

from agent_lsp.cli.images import image_line, stored_images, user_text
from agent_lsp.views.lines import failure_text, first_line, shorten, tool_call_summary
from agent_lsp.visible import visible, visible_name


def _supports_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty() and os.environ.get("TERM") != "dumb"


def _can_encode(stream: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


PROBLEM_LINES = 5  # new problems an edit's line shows; the model sees them all


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def message_of_user(data: dict[str, Any]) -> bool:
    message = data.get("message")
    return isinstance(message, dict) and message.get("source") == "user"


class Transcript:
    """Writes what happens in a session. `out` gets the conversation (assistant
    text, tool lines); `err` gets diagnostics (errors, retries, notices)."""

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        color: bool | None = None,
        show_user: bool = False,
    ):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = _supports_color(self.out) if color is None else color
        self.err_color = _supports_color(self.err) if color is None else color
        self.show_user = show_user
        self.fancy = _can_encode(self.out, "→✓✗✎…")
        self.text = ""  # all assistant text printed so far
        self._at_line_start = True
        self._in_reasoning = False
        # Notes about what a tool did (an applied edit) wait for the tool's
        # result event: the server's applyEdit request overtakes the tool/call
        # event, which is relayed in batches.
        self._after_tool_result: list[str] = []
        self._error_shown = False  # an agent/error was printed for the current turn
        # Live tool output can also overtake its tool/call event.
        self._calls_shown: set[str | None] = set()
        self._early_output: dict[str, list[str]] = {}
        # What the model replies cost, added up over the events seen, and which model answered.
        self.usage: dict[str, int] = {}
        self.model: str | None = None
        # Where the session's images are kept (`<id>.files/`), once known; a user
        # message's images wait for it in `_images`.
        self.image_folder: Callable[[], Path | None] = lambda: None
        self._images: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- output

    def visible(self, text: str) -> str:
        """`text` as it may reach the terminal: controls and bidi overrides shown, not acted on."""
        return visible(text, ascii_only=not self.fancy)

    def style(self, text: str, code: str) -> str:
        """`text` made visible, styled with an SGR code (e.g. "32" green) on a terminal."""
        text = self.visible(text)
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and code else text

    def _write(self, text: str) -> None:
        """Write text already made visible (`style`, `visible`)."""
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        """A line of its own in the conversation, after any unfinished text."""
        if not self._at_line_start:
            self._write("\n")
        self._write(text + "\n")

    def line(self, text: str, code: str = "") -> None:
        """A line of output, styled with an SGR code (e.g. "32" green) on a terminal."""
        self._line(self.style(text, code))

    def note(self, text: str) -> None:
        """A line in the conversation that is not the model's (e.g. an applied edit)."""
        self._line(self.style(text, "2"))

    def heading(self, text: str) -> None:
        self._line(self.style(text, "1"))

    def info(self, text: str) -> None:
        self._err_line(text, "2")

    def warn(self, text: str) -> None:
        self._err_line(text, "33")

    def error(self, text: str) -> None:
        self._err_line(text, "31")

    def _err_line(self, text: str, code: str) -> None:
        self.end_line()
        text = self.visible(text)
        self.err.write((f"\x1b[{code}m{text}\x1b[0m" if self.err_color else text) + "\n")
        self.err.flush()

    def blank_line(self) -> None:
        self.end_line()
        self._write("\n")

    def end_line(self) -> None:
        # Keep stderr lines from landing in the middle of a streamed sentence.
        if not self._at_line_start:
            self._write("\n")

    @property
    def arrow(self) -> str:
        return "→" if self.fancy else "->"

    @property
    def cross(self) -> str:
        return "✗" if self.fancy else "x"

    @property
    def pencil(self) -> str:
        return "✎" if self.fancy else "*"

    # ---------------------------------------------------------------- events

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        data = event.get("data") or {}
        if kind == "assistant/chunk":
            self._chunk(data.get("chunk") or {})
        elif kind == "tool/call":
            self._end_reasoning()
            summary = tool_call_summary(str(data.get("name", "?")), data.get("arguments") or "")
            self._line(self.style(f"{self.arrow} {summary}", "36"))
            call_id = data.get("callId")
            self._calls_shown.add(call_id)
            for text in self._early_output.pop(call_id, []):
                self.tool_output(text, call_id)
        elif kind == "tool/result":
            self._tool_result(data)
            self.flush_notes()
        elif kind == "user/message" and self.show_user:
            message = data.get("message") or {}
            if message.get("source") == "runtime-context":
                return  # the editor state the server told the model, not something the user said
            self._line(self.style("> " + user_text(message.get("content")).strip(), "1"))
            self._images += stored_images(message.get("content"))
            self.flush_images()
        elif kind == "user/message" and message_of_user(data):
            self._images += stored_images(data["message"].get("content"))
            self.flush_images()
        elif kind == "turn/end":
            self._end_reasoning()
            self.flush_notes()
            self.end_line()
            reason = data.get("reason") or {}
            reason_kind = reason.get("kind") if isinstance(reason, dict) else reason
            if reason_kind == "max-tokens":
                self.warn("(the reply was cut at the output limit: raise the model.maxOutputTokens setting)")
            elif reason_kind and reason_kind != "completed":
                detail = ""
                if self._error_shown:
                    pass  # agent/error already said what went wrong
                elif isinstance(reason, dict) and isinstance(reason.get("error"), dict):
                    failure = reason["error"]
                    detail = f": {failure_text(failure)}".rstrip()
                self.warn(f"(turn ended: {reason_kind}{detail})")
            self._error_shown = False
        elif kind == "llm/retry":
            delay = data.get("delayMs")
            failure = data.get("failure") or data.get("error") or {}
            code = failure.get("code") or "an error"
            when = f" in {delay / 1000:.1f} s" if isinstance(delay, (int, float)) else ""
            self.info(f"(model call failed with {code}; retrying{when})")
        elif kind == "assistant/message":
            self._count_usage(data)
        elif kind == "session/model":
            self.info(f"(model: {data.get('provider', '?')} {data.get('model', '?')}, was {data.get('previousModel', '?')})")
        elif kind == "compaction/end":
            failure = data.get("error")
            if failure:
                self.warn(f"(compacting older history failed: {(failure or {}).get('message', 'no reason given')})")
            else:
                self.info("(older history was compacted to fit the context window)")

    def _count_usage(self, data: dict[str, Any]) -> None:
        message = data.get("message") or {}
        if message.get("model"):
            provider, model = message.get("provider"), str(message["model"])
            self.model = model if not provider or provider == model else f"{provider} {model}"
        for key, value in (data.get("usage") or {}).items():
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    def usage_summary(self) -> str | None:
        """`model openai gpt-4.1 · 1234 input + 56 output tokens`, or None before any reply."""
        if self.model is None and not self.usage:
            return None
        parts = [f"model {self.model}"] if self.model else []
        if self.usage:
            tokens = f"{self.usage.get('inputTokens', 0)} input + {self.usage.get('outputTokens', 0)} output tokens"
            if self.usage.get("cacheReadTokens"):
                tokens += f" ({self.usage['cacheReadTokens']} input from the cache)"
            parts.append(tokens)
        return " · ".join(parts)

    def _chunk(self, chunk: dict[str, Any]) -> None:
        kind = chunk.get("type")
        if kind == "text-delta":
            self._end_reasoning()
            text = chunk.get("text", "")
            self.text += text
            self._write(self.visible(text))
        elif kind == "reasoning-delta" and self.color:
            # Reasoning is shown (dimmed) to a person watching, never into a pipe.
            if not self._in_reasoning:
                self._in_reasoning = True
                self.end_line()
            self._write(self.style(chunk.get("text", ""), "2;3"))
        elif kind == "text-end":
            self._end_reasoning()

    def _end_reasoning(self) -> None:
        if self._in_reasoning:
            self._in_reasoning = False
            self.end_line()

    def _tool_result(self, data: dict[str, Any]) -> None:
        message = data.get("message") or {}
        if not message.get("isError"):
            self._problems((data.get("meta") or {}).get("problems"))
            return
        error = data.get("error") or {}
        text = error.get("message") or _content_text(message.get("content")) or "failed"
        self._line(self.style(f"  {self.cross} {shorten(first_line(text, 'failed'))}", "31"))

    def _problems(self, report: Any) -> None:
        """The problems an edit added, as the language servers reported them (a few lines)."""
        if not isinstance(report, dict) or not isinstance(report.get("added"), list):
            return
        if report.get("unknown"):
            self._line(self.style(f"  ? problems unknown: {shorten(str(report['unknown']))}", "2"))
            return
        added = [p for p in report["added"] if isinstance(p, dict)]
        for problem in added[:PROBLEM_LINES]:
            where = f"{problem.get('path')}:{int(problem.get('line') or 0) + 1}"
            colour = "31" if problem.get("severity") == "error" else "33"
            self._line(self.style(f"  ! {where} {problem.get('severity')}: {shorten(str(problem.get('message')))}", colour))
        if len(added) > PROBLEM_LINES:
            self._line(self.style(f"  ! … {len(added) - PROBLEM_LINES} more new problems", "2"))

    def agent_error(self, params: dict[str, Any]) -> None:
        error = params.get("error") or {}
        self._error_shown = True
        self.error(f"error: {error.get('code', 'UNKNOWN')}: {error.get('message', '')}".rstrip(": "))

    def tool_output(self, text: str, call_id: str | None = None) -> None:
        """Live output of a running tool (e.g. a shell command), dimmed; held
        back until the tool's call line is printed when it arrives first."""
        if call_id is not None and call_id not in self._calls_shown:
            self._early_output.setdefault(call_id, []).append(text)
            return
        self._write(self.style(text, "2"))

    def edit_applied(self, paths: list[Path], root: Path | None) -> None:
        names = []
        for path in paths:
            try:
                names.append(visible_name(str(path.relative_to(root)) if root else str(path)))
            except ValueError:
                names.append(visible_name(str(path)))
        what = ", ".join(names) or "nothing"
        self._after_tool_result.append(f"  {self.pencil} applied edit to {what}")

    def flush_notes(self) -> None:
        notes, self._after_tool_result = self._after_tool_result, []
        for note in notes:
            self.note(note)
        self.flush_images()

    def flush_images(self) -> None:
        """A line for each image of the user's messages, with the path of its file
        (waiting, in a live run, until the session's folder is known)."""
        folder = self.image_folder()
        if not self._images or (folder is None and not self.show_user):
            return
        images, self._images = self._images, []
        for block in images:
            self.note(f"  {image_line(block, folder)}")
