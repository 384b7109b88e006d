"""Which Archive holds an IBI, as the resolver learnt it: the holder rule's memory.

The first time a question about an IBI is answered, the resolver remembers the Archive
whose answer it took (separately for a plain request and for the original,
``ibiurl.requireditemstatus=Original``).  From then on that Archive keeps the IBI: another
Archive that claims it is not followed (docs/protocol.md, "Who holds an IBI").  When
Archives ranked before it did not answer then (away, down), the record names them
(``pending``): it is provisional until they answer again and the question is asked anew.  The
memory is a SQLite file next to the resolver's ``--state``, so that it survives restarts
of the resolver and of the Archives; without ``--state`` it is a file in a temporary
folder removed at exit (memory stays flat however many IBIs are learnt).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

__all__ = ["Holders", "MAX_HOLDERS", "ANY", "ORIGINAL"]

log = logging.getLogger("ibistatic.resolver")

#: the most IBIs remembered: past it new ones are resolved as before but not remembered
#: (an Archive that claims every IBI asked for cannot fill the disk)
MAX_HOLDERS = 1_000_000
#: the kinds of question: any answer, or the original's
ANY, ORIGINAL = "any", "original"


class Holders:
    """{(IBI key, kind): the Archive (an id such as its service IBI key)} in SQLite."""

    def __init__(self, path: Path | str | None = None, limit: int = MAX_HOLDERS) -> None:
        self._folder = None
        if path is None:
            self._folder = tempfile.mkdtemp(prefix="ibistatic-holders-")
            path = os.path.join(self._folder, "holders.sqlite")
            atexit.register(self.close)
        self.path, self.limit = Path(path), limit
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last few
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS holders (ibi TEXT, kind TEXT, archive TEXT, "
            "pending TEXT, since REAL, PRIMARY KEY (ibi, kind)) WITHOUT ROWID"
        )
        self._count = self._db.execute("SELECT COUNT(*) FROM holders").fetchone()[0]
        self._full_logged = False

    def get(self, key: str, kind: str) -> tuple[str, tuple[str, ...]] | None:
        """(the holder, the Archives still pending) of `key`, or None."""
        row = self._db.execute(
            "SELECT archive, pending FROM holders WHERE ibi = ? AND kind = ?", (key, kind)
        ).fetchone()
        return (row[0], tuple(row[1].split())) if row is not None else None

    def remember(self, key: str, kind: str, archive: str, pending=()) -> None:
        """`archive` holds `key` from now on; provisionally while `pending` (the ids of
        Archives ranked before it that did not answer) is not empty."""
        exists = self._db.execute(
            "SELECT 1 FROM holders WHERE ibi = ? AND kind = ?", (key, kind)
        ).fetchone()
        if exists is None and self._count >= self.limit:
            if not self._full_logged:
                log.warning("holders: %d IBIs remembered, no more are kept", self._count)
                self._full_logged = True
            return
        self._db.execute(
            "INSERT OR REPLACE INTO holders VALUES (?, ?, ?, ?, ?)",
            (key, kind, archive, " ".join(pending), time.time()),
        )
        self._count += exists is None

    def release(self, key: str, kind: str, archive: str) -> None:
        """Forget that `archive` holds `key` (it answered that it no longer does)."""
        deleted = self._db.execute(
            "DELETE FROM holders WHERE ibi = ? AND kind = ? AND archive = ?", (key, kind, archive)
        )
        self._count -= deleted.rowcount

    def keep_only(self, archives: set[str]) -> int:
        """Forget what the Archives not in `archives` held (those removed from the keys
        file: an operator's way to hand their IBIs on); how many were forgotten."""
        rows = self._db.execute("SELECT DISTINCT archive FROM holders").fetchall()
        gone = [archive for (archive,) in rows if archive not in archives]
        forgotten = 0
        for archive in gone:
            forgotten += self._db.execute(
                "DELETE FROM holders WHERE archive = ?", (archive,)
            ).rowcount
        self._count -= forgotten
        return forgotten

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        try:
            self._db.close()
        except sqlite3.Error:
            pass
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
