"""Checkpoints of the workspace around each shell command, so that turn
revert undoes what commands changed too (`sed -i`, a formatter, a generator).

Before `run_command` runs, the files of the workspace are recorded in a
shadow object store of our own, outside the user's repository: one
compressed copy per distinct content, named by its SHA-256, under the
folder's sessions directory (`checkpoints/<pid>/`). Nothing is written to
the user's repository (no commit, stash or index change). A file whose size,
mtime and inode are unchanged since the last checkpoint is not read again,
so a checkpoint of an unchanged workspace costs one walk with `stat` calls
(figures: bench/checkpoint_bench.py).

After the command, the workspace is walked again and every text file it
created, changed or deleted becomes a `FileChange` in the turn's edit
journal, with its durable record in the tool result (like the file tools'
changes): revert then treats it like an agent edit, hunk by hunk, and
leaves alone what the user changed since.

Limits (documented in docs/protocol.md, "Turn revert"):
- files ignored by `.gitignore` (and `.git`) are not recorded: a command's
  changes to them are not reverted;
- a file over `max_file_bytes`, a binary file or one that is not UTF-8 is
  not recorded; when there are more than `max_files` files, the walk stops
  there and the rest is not recorded;
- a change made by someone else while the command runs counts as the command's.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from agent_lsp.tools.base import FileChange
from agent_lsp.tools.ignore import walk_files
from agent_lsp.tools.text import decode, is_binary

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1_000_000
MAX_FILES = 50_000

StatKey = tuple[int, int, int]  # size, mtime_ns, inode


@dataclass(eq=False)  # compared by identity: the running commands' checkpoints are told apart
class Checkpoint:
    """The recorded text files: path -> digest of their content."""

    files: dict[Path, str] = field(default_factory=dict)
    unrecorded: set[Path] = field(default_factory=set)  # present, but over a limit or not text


class ObjectStore:
    """Contents by digest, compressed, one file each."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _path(self, digest: str) -> Path:
        return self.directory / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part")
            partial.write_bytes(zlib.compress(data, 1))
            os.replace(partial, path)
        return digest

    def get(self, digest: str) -> bytes | None:
        try:
            return zlib.decompress(self._path(digest).read_bytes())
        except (OSError, zlib.error):
            return None

    def drop(self, digest: str) -> None:
        try:
            self._path(digest).unlink()
        except OSError:
            pass


class WorkspaceCheckpoints:
    """Checkpoints of one workspace folder (implements `CommandWatcher`)."""

    def __init__(self, root: Path, store_dir: Path, *, excluded: tuple[Path, ...] = (),
                 max_file_bytes: int = MAX_FILE_BYTES, max_files: int = MAX_FILES):
        self.root = Path(root).resolve()
        # the sessions directory may be inside the workspace: its logs and this store are not the user's files
        self.excluded = tuple(str(Path(p).resolve()) + os.sep for p in (store_dir, *excluded))
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.directory = store_dir / str(os.getpid())
        _remove_stale(store_dir)
        self.objects = ObjectStore(self.directory)
        self._known: dict[Path, tuple[StatKey, str | None]] = {}  # stat key -> digest (None: not text)
        self._last = Checkpoint()
        self._running: list[Checkpoint] = []  # taken before commands still running (sessions run side by side)
        self._lock = asyncio.Lock()  # one walk at a time

    async def before_command(self) -> Checkpoint:
        async with self._lock:
            checkpoint = await asyncio.to_thread(self._take)
            self._running.append(checkpoint)
            self._advance(checkpoint)
            return checkpoint

    async def changes_since(self, before: Checkpoint) -> list[FileChange]:
        """The text files created, changed or deleted since `before` (taken by
        `before_command`); after this, `before` is done with."""
        async with self._lock:
            after = await asyncio.to_thread(self._take)
            changes = await asyncio.to_thread(self._diff, before, after)
            self.forget(before)
            self._advance(after)
            return changes

    def forget(self, before: Checkpoint) -> None:
        """`before` will not be compared (its command's task was cancelled)."""
        if before in self._running:
            self._running.remove(before)

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    # ------------------------------------------------------------ internals

    def _take(self) -> Checkpoint:
        checkpoint = Checkpoint()
        known: dict[Path, tuple[StatKey, str | None]] = {}
        for count, path in enumerate(walk_files(self.root, self.root)):
            if count >= self.max_files:
                break
            if str(path).startswith(self.excluded):
                continue
            try:
                st = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # a link, a socket, …: not the file itself
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            if st.st_size > self.max_file_bytes:
                checkpoint.unrecorded.add(path)
                continue
            cached = self._known.get(path)
            digest = cached[1] if cached is not None and cached[0] == key else self._store(path)
            known[path] = (key, digest)
            if digest is None:
                checkpoint.unrecorded.add(path)
            else:
                checkpoint.files[path] = digest
        self._known = known
        return checkpoint

    def _store(self, path: Path) -> str | None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if is_binary(data) or decode(data).lossy:
            return None
        return self.objects.put(data)

    def _text(self, digest: str) -> str | None:
        data = self.objects.get(digest)
        return None if data is None else decode(data).text

    def _diff(self, before: Checkpoint, after: Checkpoint) -> list[FileChange]:
        changes: list[FileChange] = []
        for path in sorted(before.files.keys() | after.files.keys()):
            old, new = before.files.get(path), after.files.get(path)
            if old == new:
                continue
            if new is None and path in after.unrecorded:
                continue  # still there, now over a limit: not known, not a delete
            old_text = None if old is None else self._text(old)
            new_text = None if new is None else self._text(new)
            if old is not None and old_text is None:
                continue  # its copy is gone (the store was cleaned): nothing to go back to
            if old is None and path in before.unrecorded:
                continue  # it was there before, over a limit: its old text is unknown
            if new is None:
                changes.append(FileChange(path, old_text, None, deleted=True))
            else:
                changes.append(FileChange(path, old_text, new_text))
        return changes

    def _advance(self, latest: Checkpoint) -> None:
        """Drop the contents no longer in the workspace nor in a running
        command's checkpoint: the journal keeps the changes themselves."""
        kept = set(latest.files.values()).union(*(set(c.files.values()) for c in self._running))
        for digest in set(self._last.files.values()) - kept:
            self.objects.drop(digest)
        self._last = latest


def _remove_stale(store_dir: Path) -> None:
    """Remove the stores of servers that are gone (each server keeps its own)."""
    try:
        entries = list(store_dir.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.isdigit() and int(entry.name) != os.getpid() and not _alive(int(entry.name)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
