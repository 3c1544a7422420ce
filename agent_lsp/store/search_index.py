"""The text index of a session store: which sessions contain a word, without
reading hundreds of session files for every search.

One SQLite file per store directory (`search.sqlite`, the stdlib `sqlite3`),
holding the text of the messages people read (`message_text.searchable_text`;
titles are matched from the listing, which has them) in an FTS5 table
(Unicode words, any case, accents ignored): a search word matches the words
that start with it ("pars" finds "parser"), a word with no letters or digits
("++") is matched as a substring by a scan of the table. An SQLite without
FTS5 gets a plain table searched by substring scans: slower, broader.

The session files stay the truth; the index is derived from them and kept up
to date by the searches themselves: each file's indexed length is recorded,
and a search first reads what every file gained since (session files only
grow: a file that shrank is indexed again from its start; one that is gone is
dropped). So a missing, stale or damaged index file is rebuilt by the next
search, and nobody ever has to rebuild it by hand. Two servers on one folder
share the file (SQLite's locking, WAL journal).

The same file keeps each session file's listing summary (`summaries`: one
record per file, opaque here, made and checked by `SessionStore.list`), so a
fresh server reads only the files that changed since. A damaged or missing
table just means those files are read again.

One connection, used from the server's event loop and from the worker thread
that lists and searches, one call at a time (`_lock`).
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Mapping

from agent_lsp.store.message_text import searchable_text

log = logging.getLogger(__name__)

INDEX_FILE = "search.sqlite"
SCHEMA_VERSION = 3
EXCERPT_CHARS = 120
EXCERPT_WORDS = 16

# Where an event line with text to index names its type, and the start its line must have
# (the writer's compact JSON): found with `find` over the mapped file, which is what keeps
# indexing fast when most of a file is stream chunks.
_TEXT_TYPES = (b',"type":"user/message",', b',"type":"assistant/message",')
_LINE_START = re.compile(rb'\{"seq":(\d+),"time":\d+$')


def _rows_of(session_id: str, raw: "mmap.mmap | bytes", start: int, end: int) -> list[tuple[str, int, str]]:
    """(session id, seq, text) of the indexable events in the whole lines of `raw[start:end]`."""
    rows = []
    for needle in _TEXT_TYPES:
        at = raw.find(needle, start, end)
        while at >= 0:
            line_start = raw.rfind(b"\n", start, at) + 1 or start
            line_end = raw.find(b"\n", at, end)
            if line_end < 0:
                break  # the last line is being written: indexed once whole
            if _LINE_START.match(raw[line_start:at]):
                try:
                    event = json.loads(raw[line_start:line_end])
                    text = searchable_text(event["type"], event["data"])
                    if text and text.strip():
                        rows.append((session_id, int(event["seq"]), text))
                except (ValueError, KeyError, TypeError, AttributeError):
                    pass  # a damaged line: listing and loading report it
            at = raw.find(needle, line_end, end)
    return rows


_WORD = re.compile(r"\w")


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def excerpt(text: str, term: str, width: int = EXCERPT_CHARS) -> str:
    """About `width` characters of `text` around the first `term` (any case), whitespace collapsed."""
    flat = " ".join(text.split())
    found = re.search(re.escape(" ".join(term.split())), flat, re.IGNORECASE)
    at = found.start() if found else 0
    start = max(0, at - width // 3)
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class SearchIndex:
    def __init__(self, directory: Path):
        self.path = Path(directory) / INDEX_FILE
        self._db: sqlite3.Connection | None = None
        self.fts = False  # whether the table is FTS5 (else scanned)
        self._lock = threading.RLock()

    # ------------------------------------------------------------ the file

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self._db = self._connect(self.path)
            except sqlite3.DatabaseError as error:  # damaged, or not an SQLite file: derived data, so made again
                log.warning("the search index %s is unreadable (%s): rebuilding it", self.path, error)
                self._remove_file()
                try:
                    self._db = self._connect(self.path)
                except sqlite3.Error as again:  # e.g. a read-only directory: an index in memory for this process
                    log.warning("the search index cannot be written to %s (%s): kept in memory", self.path, again)
                    self._db = self._connect(":memory:")
        return self._db

    def _connect(self, where: Path | str) -> sqlite3.Connection:
        db = sqlite3.connect(where, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            if where != ":memory:":
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                db.executescript("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS texts;")
            db.execute("CREATE TABLE IF NOT EXISTS files (id TEXT PRIMARY KEY, indexed INTEGER NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS summaries (id TEXT PRIMARY KEY, record TEXT NOT NULL)")
            try:
                db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(id UNINDEXED, seq UNINDEXED, body,"
                           " tokenize='unicode61 remove_diacritics 2', prefix='2 3')")
            except sqlite3.OperationalError:  # an SQLite built without FTS5
                db.execute("CREATE TABLE IF NOT EXISTS texts (id TEXT, seq INTEGER, body TEXT)")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            sql = db.execute("SELECT sql FROM sqlite_master WHERE name='texts'").fetchone()[0]
            self.fts = "fts5" in sql.lower()
            return db
        except BaseException:
            db.close()
            raise

    def _remove_file(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                Path(str(self.path) + suffix).unlink()
            except OSError:
                pass

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # ------------------------------------------------------------ summaries

    def saved_summaries(self) -> dict[str, str]:
        """The summary record saved for each session file (id -> record)."""
        with self._lock:
            try:
                return dict(self._open().execute("SELECT id, record FROM summaries").fetchall())
            except sqlite3.DatabaseError as error:
                log.warning("the session summaries in %s are unreadable (%s): reading the session files", self.path, error)
                return {}

    def save_summaries(self, records: Mapping[str, str], gone: Iterable[str] = ()) -> None:
        """Save these summary records and drop those of files no longer there."""
        with self._lock:
            try:
                db = self._open()
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany("DELETE FROM summaries WHERE id = ?", [(sid,) for sid in gone])
                    db.executemany("INSERT INTO summaries (id, record) VALUES (?, ?)"
                                   " ON CONFLICT(id) DO UPDATE SET record=excluded.record", records.items())
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            except sqlite3.DatabaseError as error:  # derived data: the next listing reads the files again
                log.warning("the session summaries cannot be saved to %s (%s)", self.path, error)

    # ------------------------------------------------------------ updating

    def update(self, files: Mapping[str, tuple[Path, int]]) -> None:
        """Bring the index up to date with these session files (id -> (path,
        size)): index what each gained since, drop the ones no longer there."""
        with self._lock:
            self._update(files)

    def _update(self, files: Mapping[str, tuple[Path, int]]) -> None:
        db = self._open()
        indexed = dict(db.execute("SELECT id, indexed FROM files").fetchall())
        todo = [(sid, path, size) for sid, (path, size) in files.items() if indexed.get(sid) != size]
        gone = [sid for sid in indexed if sid not in files]
        if not todo and not gone:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            for sid in gone:
                self._drop(db, sid)
            for sid, path, size in todo:
                self._index_file(db, sid, path, size, indexed.get(sid, 0))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _index_file(self, db: sqlite3.Connection, sid: str, path: Path, size: int, done: int) -> None:
        if size < done:  # not the file that was indexed: start again
            self._drop(db, sid)
            done = 0
        try:
            with open(path, "rb") as f:
                size = min(size, f.seek(0, os.SEEK_END))
                if size <= done:
                    return
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as raw:
                    whole = raw.rfind(b"\n", done, size) + 1 or done  # a line being written waits until whole
                    rows = _rows_of(sid, raw, done, whole)
        except (OSError, ValueError):
            return  # deleted or emptied meanwhile: the next update sees it
        db.executemany("INSERT INTO texts (id, seq, body) VALUES (?, ?, ?)", rows)
        db.execute("INSERT INTO files (id, indexed) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET indexed=excluded.indexed",
                   (sid, whole))

    def forget(self, session_id: str) -> None:
        """Drop a deleted session's text and summary."""
        with self._lock:
            if self._db is not None:
                self._drop(self._db, session_id)
                self._db.execute("DELETE FROM summaries WHERE id = ?", (session_id,))

    @staticmethod
    def _drop(db: sqlite3.Connection, sid: str) -> None:
        db.execute("DELETE FROM texts WHERE id = ?", (sid,))
        db.execute("DELETE FROM files WHERE id = ?", (sid,))

    # ------------------------------------------------------------ searching

    def first_matches(self, term: str) -> dict[str, int]:
        """The sessions with `term` in their text (any case), each with the row of
        its first message that has it (for `excerpts`)."""
        with self._lock:
            return {sid: rowid for sid, _, rowid in self._matching(term, "SELECT id, min(seq), rowid", "GROUP BY id")}

    def excerpts(self, term: str, rows: Mapping[str, int]) -> dict[str, str]:
        """For these sessions, an excerpt of their row (from `first_matches`) around `term`."""
        if not rows:
            return {}
        with self._lock:
            picked = ",".join(str(int(rowid)) for rowid in rows.values())
            if not self._uses_fts(term):
                bodies = self._open().execute(f"SELECT id, body FROM texts WHERE rowid IN ({picked})").fetchall()
                return {sid: excerpt(body, term) for sid, body in bodies}
            # FTS5 cuts the excerpts of those rows only: no message is copied out whole
            cut = f"SELECT id, snippet(texts, 2, '', '', '…', {EXCERPT_WORDS})"
            return {sid: " ".join(text.split()) for sid, text in self._matching(term, cut, f"AND rowid IN ({picked})")}

    def _uses_fts(self, term: str) -> bool:
        self._open()  # which table it is is known once open
        return self.fts and _WORD.search(term) is not None

    def _matching(self, term: str, select: str, rest: str = "") -> list[tuple]:
        db = self._open()
        if self._uses_fts(term):
            # the words of `term` in a row, the last one a prefix: "pars" finds "parser", "load_set" "load_settings"
            return db.execute(f"{select} FROM texts WHERE texts MATCH ? {rest}",
                              ('"' + term.replace('"', '""') + '"*',)).fetchall()
        return db.execute(f"{select} FROM texts WHERE body LIKE ? ESCAPE '\\' {rest}", (_like(term),)).fetchall()
