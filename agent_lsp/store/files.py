"""Files a session's messages refer to (the images a user sent), written once
beside the session log: `<id>.files/<sha256>.<ext>` next to `<id>.jsonl`,
named by their content, so the same image sent twice is stored once. The
events hold the name, never the bytes; a fork gets the folder's files (hard
links where the file system allows), a delete removes the folder."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


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


def copy(source: Path, target: Path) -> None:
    """The files of a session for its fork (nothing when it has none)."""
    if not source.is_dir():
        return
    target.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.name.startswith(".") or not path.is_file():
            continue
        try:
            os.link(path, target / path.name)
        except OSError:
            shutil.copyfile(path, target / path.name)


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
