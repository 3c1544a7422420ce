"""An advisory lock per open session, so two processes never append to one log.

Two editor windows on one workspace run two servers over one sessions
directory. The process that opens a session holds an exclusive `flock` on
`<id>.lock` (beside `<id>.jsonl`) until it closes the session; the lock file
names the holder's pid. Another process that tries to open the session gets
`SessionLockedError` naming that pid. The kernel drops the lock when the
holder dies, so a crash never leaves a session locked.

Within one process a session may be opened more than once (a store's
re-load, a second store on the same directory): the lock is counted per path
and released when the last holder lets go. One process may serve several
editor windows (the agent host, `agent_lsp.daemon`): each window's stores
name their window as the `holder`, and a window that is not the one holding
the session gets `SessionLockedError` as another process would.

Windows: `msvcrt.locking` on the first byte of the lock file gives the same
exclusion; elsewhere without either, locking is skipped.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class SessionLockedError(Exception):
    """The session is open in another live process."""

    def __init__(self, session_id: str, pid: int | None, path: Path, *, same_process: bool = False):
        self.session_id = session_id
        self.pid = pid
        self.path = path
        if same_process:
            super().__init__(f"session {session_id} is open in another window of this agent-lsp host "
                             f"(process {pid}; lock {path})")
            return
        holder = f"process {pid}" if pid else "process"
        super().__init__(f"session {session_id} is open in another agent-lsp {holder} (lock {path})")


class _Held:
    def __init__(self, fd: int, holder: str | None):
        self.fd = fd
        self.holder = holder  # the window of this process that holds it (None: the process)
        self.count = 0


_held: dict[str, _Held] = {}
_guard = threading.Lock()


class SessionLock:
    """One holder's share of a session's lock; `release()` is idempotent."""

    def __init__(self, path: Path, key: str):
        self.path = path
        self._key = key
        self._released = False

    def release(self) -> None:
        with _guard:
            if self._released:
                return
            self._released = True
            key = self._key
            held = _held.get(key)
            if held is None:
                return
            held.count -= 1
            if held.count > 0:
                return
            del _held[key]
            try:
                os.close(held.fd)  # closing the descriptor drops the lock
            except OSError:
                pass


def _key(lock_path: Path) -> str:
    # one entry per file, however the directory was spelled (a second flock on the
    # same file from this process would conflict with the first)
    return os.path.realpath(lock_path)


def acquire(lock_path: Path, session_id: str, holder: str | None = None) -> SessionLock:
    """Lock a session for this process (for its window `holder`, where the
    process serves several), or raise SessionLockedError."""
    key = _key(lock_path)
    with _guard:
        held = _held.get(key)
        if held is not None and held.holder != holder:
            raise SessionLockedError(session_id, os.getpid(), lock_path, same_process=True)
        if held is None:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _try_lock(fd):
                pid = _read_pid(fd)
                os.close(fd)
                raise SessionLockedError(session_id, pid, lock_path)
            _write_pid(fd)
            held = _held[key] = _Held(fd, holder)
        held.count += 1
    return SessionLock(lock_path, key)


def holder_pid(lock_path: Path, holder: str | None = None) -> int | None:
    """The pid of the live process holding this lock, None when nobody holds it;
    -1 when it is held but the pid is unknown or the holder is another window of
    this process."""
    try:
        fd = os.open(lock_path, os.O_RDWR)
    except OSError:
        return None
    try:
        held = _held.get(_key(lock_path))
        if held is not None:
            return os.getpid() if held.holder == holder else -1
        if _try_lock(fd):
            _unlock(fd)
            return None
        return _read_pid(fd) or -1
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False
    if sys.platform == "win32":
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    return True  # no locking primitive: skip


def _unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    elif sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def _write_pid(fd: int) -> None:
    # The pid goes after byte 0 on Windows (byte 0 is the locked region; it is
    # written too, which the holder may do).
    data = json.dumps({"pid": os.getpid()}).encode()
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, data)
    except OSError:
        pass


def _read_pid(fd: int) -> int | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 200)
        pid = json.loads(data).get("pid")
        return pid if isinstance(pid, int) else None
    except (OSError, ValueError, AttributeError):
        return None
