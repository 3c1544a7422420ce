"""`--settings JSON|FILE`, shared by the commands that take it.

A module of its own so that `agent-lsp acp` can read it without importing
the headless LSP client (`cli/run.py` brings pygls and lsprotocol, which the
ACP face never uses and which cost a good part of its start).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class UsageError(Exception):
    pass


def load_settings(value: str | None) -> dict[str, Any]:
    """`--settings`: JSON text, or the path of a JSON file (optionally `@path`)."""
    if not value:
        return {}
    text = value
    candidate = Path(value[1:] if value.startswith("@") else value).expanduser()
    if value.startswith("@") or (not value.lstrip().startswith("{") and candidate.is_file()):
        try:
            text = candidate.read_text(encoding="utf-8")
        except OSError as error:
            raise UsageError(f"--settings: cannot read {candidate}: {error}") from error
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"--settings: not valid JSON ({error})") from error
    if not isinstance(settings, dict):
        raise UsageError("--settings: expected a JSON object")
    return settings
