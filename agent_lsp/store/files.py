"""Files a session's messages refer to (the images a user sent), written once
beside the session log: `<id>.files/<sha256>.<ext>` next to `<id>.jsonl`,
named by their content, so the same image sent twice is stored once. The
events hold the name, never the bytes; a fork gets the files of the events it
keeps (hard links where the file system allows), a delete removes the folder."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Iterable


def files_dir(log_path: Path) -> Path:
    """The folder of a session's files, beside its `<id>.jsonl`."""
    return log_path.with_suffix(".files")


def put(folder: Path, data: bytes, extension: str) -> str:
    """Store `data` (once) and give its name in the folder."""
    name = f"{hashlib.sha256(data).hexdigest()}.{extension}"
    path = folder / name
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{name}.partial"
        partial.write_bytes(data)
        os.replace(partial, path)
    return name


def read(folder: Path, name: str) -> bytes:
    """A stored file's bytes; FileNotFoundError for a name not stored (or not a plain name)."""
    if not name or Path(name).name != name or name.startswith("."):
        raise FileNotFoundError(name)
    return (folder / name).read_bytes()


def referenced(events: Iterable[Any]) -> set[str]:
    """The files the messages of these events (objects with `.type` and `.data`) refer to."""
    names: set[str] = set()
    for event in events:
        message = event.data.get("message") if event.type == "user/message" else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "image" and isinstance(block.get("file"), str):
                names.add(block["file"])
    return names


def copy(source: Path, target: Path, names: set[str] | None = None) -> None:
    """The files of a session for its fork: those named (all when None); nothing
    when it has none."""
    if not source.is_dir() or names == set():
        return
    target.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.name.startswith(".") or not path.is_file() or (names is not None and path.name not in names):
            continue
        try:
            os.link(path, target / path.name)
        except OSError:
            shutil.copyfile(path, target / path.name)


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
