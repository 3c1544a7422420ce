"""Checkpoints of the workspace around each shell command, so that turn
revert undoes what commands changed too (`sed -i`, a formatter, a generator).

Before `run_command` runs, the files of the workspace are recorded in a
shadow object store of our own, outside the user's repository: one
compressed copy per distinct content, by its SHA-256, appended to pack files
under the folder's sessions directory (`checkpoints/<pid>/`). Nothing is written to
the user's repository (no commit, stash or index change). A file whose size,
mtime and inode are unchanged since the last checkpoint is not read again,
so a checkpoint of an unchanged workspace costs one walk with `stat` calls
(figures: bench/checkpoint_walk.py).

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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agent_lsp.tools.journal_record import FileChange
from agent_lsp.tools.ignore import walk_files
from agent_lsp.tools.text import decode, is_binary

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1_000_000
MAX_FILES = 50_000
READ_THREADS = 8  # files read at once for a checkpoint

StatKey = tuple[int, int, int]  # size, mtime_ns, inode


@dataclass(eq=False)  # compared by identity: the running commands' checkpoints are told apart
class Checkpoint:
    """The recorded text files: path (as a string) -> digest of their content."""

    files: dict[str, str] = field(default_factory=dict)
    unrecorded: set[str] = field(default_factory=set)  # present, but over a limit or not text


@dataclass(frozen=True)
class _Blob:
    """A file's content read for the store: its digest and compressed bytes."""

    digest: str
    packed: bytes


class ObjectStore:
    """Contents by digest, compressed, appended to pack files. The index is in
    memory: the store is this server's own and goes with it (`close`), so
    nothing needs to find an object after a restart. One append per new
    content instead of a file per object: creating thousands of small files
    was most of a first checkpoint's time. A pack whose objects were all
    dropped is deleted; a new pack starts after `PACK_BYTES`."""

    PACK_BYTES = 64 * 1024 * 1024

    def __init__(self, directory: Path):
        self.directory = directory
        self._index: dict[str, tuple[int, int, int]] = {}  # digest -> (pack, offset, length)
        self._live: dict[int, int] = {}  # pack -> how many indexed objects it holds
        self._pack = 0
        self._writer: BinaryIO | None = None

    def _pack_path(self, pack: int) -> Path:
        return self.directory / f"{pack}.pack"

    def __contains__(self, digest: str) -> bool:
        return digest in self._index

    def put(self, data: bytes) -> str:
        blob = pack_blob(data)
        self.add(blob)
        return blob.digest

    def add(self, blob: _Blob) -> None:
        if blob.digest in self._index:
            return
        writer = self._writer
        if writer is None or writer.tell() >= self.PACK_BYTES:
            if writer is not None:
                writer.close()
                if not self._live.get(self._pack):
                    self._pack_path(self._pack).unlink(missing_ok=True)
                self._pack += 1
            self.directory.mkdir(parents=True, exist_ok=True)
            writer = self._writer = open(self._pack_path(self._pack), "ab")
        offset = writer.tell()
        writer.write(blob.packed)
        self._index[blob.digest] = (self._pack, offset, len(blob.packed))
        self._live[self._pack] = self._live.get(self._pack, 0) + 1

    def get(self, digest: str) -> bytes | None:
        entry = self._index.get(digest)
        if entry is None:
            return None
        pack, offset, length = entry
        if pack == self._pack and self._writer is not None:
            self._writer.flush()
        try:
            with open(self._pack_path(pack), "rb") as handle:
                handle.seek(offset)
                return zlib.decompress(handle.read(length))
        except (OSError, zlib.error):
            return None

    def drop(self, digest: str) -> None:
        entry = self._index.pop(digest, None)
        if entry is None:
            return
        pack = entry[0]
        self._live[pack] -= 1
        if not self._live[pack] and pack != self._pack:
            del self._live[pack]
            self._pack_path(pack).unlink(missing_ok=True)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def pack_blob(data: bytes) -> _Blob:
    return _Blob(hashlib.sha256(data).hexdigest(), zlib.compress(data, 1))


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
        self._known: dict[str, tuple[StatKey, str | None]] = {}  # path -> (stat key, digest; None: not text)
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
        self.objects.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    # ------------------------------------------------------------ internals

    def _take(self) -> Checkpoint:
        """Walk the workspace: files whose size, mtime and inode are as last
        seen keep their digest (a `stat` each); the others are read, in a few
        threads, as file reads wait on the disk."""
        checkpoint = Checkpoint()
        known: dict[str, tuple[StatKey, str | None]] = {}
        unread: list[tuple[str, StatKey]] = []
        for count, path in enumerate(walk_files(self.root, self.root)):
            if count >= self.max_files:
                break
            name = str(path)
            if name.startswith(self.excluded):
                continue
            try:
                st = os.lstat(name)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # a link, a socket, …: not the file itself
            if st.st_size > self.max_file_bytes:
                checkpoint.unrecorded.add(name)
                continue
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            cached = self._known.get(name)
            if cached is not None and cached[0] == key:
                known[name] = cached
            else:
                unread.append((name, key))
        if unread:
            with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
                for (name, key), blob in zip(unread, pool.map(lambda item: _read_text(item[0]), unread)):
                    if blob is not None:
                        self.objects.add(blob)
                    known[name] = (key, blob.digest if blob is not None else None)
        for name, (_, digest) in known.items():
            if digest is None:
                checkpoint.unrecorded.add(name)
            else:
                checkpoint.files[name] = digest
        self._known = known
        return checkpoint

    def _text(self, digest: str) -> str | None:
        data = self.objects.get(digest)
        return None if data is None else decode(data).text

    def _diff(self, before: Checkpoint, after: Checkpoint) -> list[FileChange]:
        changes: list[FileChange] = []
        for name in sorted(before.files.keys() | after.files.keys()):
            old, new = before.files.get(name), after.files.get(name)
            if old == new:
                continue
            path = Path(name)
            if new is None and name in after.unrecorded:
                continue  # still there, now over a limit: not known, not a delete
            old_text = None if old is None else self._text(old)
            new_text = None if new is None else self._text(new)
            if old is not None and old_text is None:
                continue  # its copy is gone (the store was cleaned): nothing to go back to
            if old is None and name in before.unrecorded:
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


def _read_text(name: str) -> _Blob | None:
    """A text file's content, ready for the store; None for a binary or non-UTF-8 one."""
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if is_binary(data) or decode(data).lossy:
        return None
    return pack_blob(data)


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
