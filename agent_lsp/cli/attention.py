"""The terminal bell of `run` and `chat` at a terminal: a question of the
agent that waits for an answer rings it, and so does a turn that ends after
running a while (`--bell-after SECONDS`, default 5; `off` never rings). A
terminal tells a user in another window or tab as it is set to (marks the
tab, flashes, bounces the dock icon); nothing is written where no terminal
reads it."""

from __future__ import annotations

import argparse
import time
from typing import TextIO

DEFAULT_AFTER_S = 5.0


def bell_after(text: str) -> float | None:
    """`--bell-after`'s value: seconds, or None for "off"."""
    if text.strip().lower() in ("off", "never", "no"):
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds or off, not {text!r}") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError("expected seconds (0 or more) or off")
    return seconds


class Bell:
    """Rings `stream` (a terminal) for questions, and for turns of at least `after_s`."""

    def __init__(self, stream: TextIO, after_s: float | None = DEFAULT_AFTER_S):
        self.stream = stream
        self.after_s = after_s
        self._started = time.monotonic()

    @property
    def on(self) -> bool:
        try:
            return self.after_s is not None and self.stream.isatty()
        except (AttributeError, ValueError):
            return False

    def ring(self) -> None:
        if self.on:
            self.stream.write("\a")
            self.stream.flush()

    def turn_started(self) -> None:
        self._started = time.monotonic()

    def turn_ended(self) -> None:
        if self.after_s is not None and time.monotonic() - self._started >= self.after_s:
            self.ring()
