"""urlkeys and acknowledgments: the Archive side of access counting (resolution-system §6.2).

Each urlRequest answer with a URL carries a fresh ``urlkey`` (Table 5.1 grammar); the
resolver sends it back in the ``acknowledgment`` of Table 6.11 when it returns that URL
to a reader.  An Archive that counts accesses must only count acknowledgments that a
resolver it joined sent for a urlRequest of its own.  ``ibistatic serve`` issues
:class:`ResolverKeys`: unforgeable (an HMAC), expiring, and bound to the address that
asked, so only that address can acknowledge with them; it counts only acknowledgments
from its resolvers (``--join``, ``--ack-from``).  The resolver acknowledges every redirect
it gives with the key of the answer it gave it from, a cached one too, so a key may
serve several acknowledgments from its resolver.  (:class:`UrlKeys`, spent on their
first use, serve an Archive that counts acknowledgments from anyone.)  Each accepted
acknowledgment is one access: a JSON line in the ack log (:class:`AckLog`), summarised
per item by ``ibistatic acks`` (:func:`summarise`).
"""

from __future__ import annotations

import atexit
import hmac
import json
import os
import re
import secrets
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError

__all__ = [
    "ResolverKeys",
    "UrlKeys",
    "SpentKeys",
    "AckLog",
    "ack_record",
    "record_time",
    "summarise",
    "ItemCount",
    "DEFAULT_KEY_SECONDS",
]

#: how long an issued urlkey may be acknowledged (a resolver acknowledges at once)
DEFAULT_KEY_SECONDS = 600.0
#: the required pairs of an acknowledgment: Table 6.11's "obr." but ``state``, which the
#: seeds' own Example 6.9 (URLib's acknowledgment) leaves out
REQUIRED = (
    "clientinformation.ipaddress",
    "contenttype",
    "url",
    "url.persistent",
    "urlkey",
)


class UrlKeys:
    """Issues unguessable urlkeys that expire after `seconds`, and spends them.

    A key is ``<issue second>-<10 random digits><16 digits of an HMAC>`` (Table 5.1:
    ``10*DIGIT ["-" 10*DIGIT]``): the HMAC (SHA-256, a secret made at start) makes keys
    unforgeable and lets any process holding the secret check one, so the forked workers
    of ``serve --workers`` all accept the keys any of them issued, with no memory per
    issued key.  A spent key is remembered until it expires in a :class:`SpentKeys`
    store the workers share, so each key is accepted once by the whole server, whichever
    worker a replay reaches.
    """

    _KEY = re.compile(r"([0-9]{10})-([0-9]{10})([0-9]{16})")

    def __init__(
        self,
        seconds: float = DEFAULT_KEY_SECONDS,
        clock: Callable[[], float] = time.time,
        secret: bytes | None = None,
        spent: "SpentKeys | None" = None,
    ) -> None:
        if seconds <= 0:
            raise UsageError(f"urlkey lifetime {seconds!r}: expected a positive number of seconds")
        self.seconds, self.clock = seconds, clock
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.spent = spent if spent is not None else SpentKeys()

    def __call__(self) -> str:
        """A fresh key."""
        body = f"{int(self.clock()):010d}-{secrets.randbelow(10**10):010d}"
        return body + self._mac(body)

    def _mac(self, body: str) -> str:
        digest = hmac.digest(self._secret, body.encode("ascii"), "sha256")
        return f"{int.from_bytes(digest[:8], 'big') % 10**16:016d}"

    def spend(self, key: str) -> bool:
        """Whether `key` was issued with this secret, has not expired and was not spent
        before (by any process sharing the store); spends it."""
        match = self._KEY.fullmatch(key)
        if match is None:
            return False
        body = key[:-16]
        if not hmac.compare_digest(self._mac(body), match.group(3)):
            return False
        now = self.clock()
        expiry = int(match.group(1)) + self.seconds
        if expiry <= now:
            return False
        return self.spent.first(key, expiry, now)

    def __len__(self) -> int:
        """How many spent keys are remembered (those not yet expired, or not yet forgotten)."""
        return len(self.spent)


class ResolverKeys:
    """urlkeys bound to the address that asked for them.

    A key is ``<issue second>-<10 random digits><16 digits of an HMAC>`` (Table 5.1), the
    HMAC (SHA-256, a secret made at start, shared by forked workers) taken over the key's
    body and the requester's address: :meth:`check` accepts a key only from the address
    it was issued to, until it expires.  Nothing needs storing per key; the keys accepted
    lately are remembered with their expiry (at most :attr:`KNOWN_MAX`, then forgotten
    all at once) because a cached answer's key comes back with each of its redirects,
    and the HMAC was most of what counting one of them cost.
    """

    _KEY = UrlKeys._KEY
    KNOWN_MAX = 4096

    def __init__(
        self,
        seconds: float = DEFAULT_KEY_SECONDS,
        clock: Callable[[], float] = time.time,
        secret: bytes | None = None,
    ) -> None:
        if seconds <= 0:
            raise UsageError(f"urlkey lifetime {seconds!r}: expected a positive number of seconds")
        self.seconds, self.clock = seconds, clock
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self._known: dict[tuple[str, str], int] = {}  # (key, sender) -> its expiry

    def issue(self, requester: str) -> str:
        """A fresh key for `requester` (the address of the urlRequest)."""
        body = f"{int(self.clock()):010d}-{secrets.randbelow(10**10):010d}"
        return body + self._mac(body, requester)

    def _mac(self, body: str, requester: str) -> str:
        message = f"{body} {requester}".encode("ascii", "replace")
        digest = hmac.digest(self._secret, message, "sha256")
        return f"{int.from_bytes(digest[:8], 'big') % 10**16:016d}"

    def check(self, key: str, sender: str) -> bool:
        """Whether `key` was issued here to `sender` and has not expired."""
        expiry = self._known.get((key, sender))
        if expiry is None:
            match = self._KEY.fullmatch(key)
            if match is None or not hmac.compare_digest(self._mac(key[:-16], sender), match[3]):
                return False
            expiry = int(match[1]) + self.seconds
            if len(self._known) >= self.KNOWN_MAX:
                self._known.clear()
            self._known[key, sender] = expiry
        return expiry > self.clock()


class SpentKeys:
    """The urlkeys spent by every process of one server: a SQLite table in a folder made
    at start and removed at exit.  Forked workers share the file (each opens its own
    connection on first use; SQLite serialises the writers), so "spent once" holds for
    the whole server.  Expired keys are deleted as new ones come."""

    #: spends between two deletions of expired keys
    PRUNE_EVERY = 256

    def __init__(self) -> None:
        self._folder = tempfile.mkdtemp(prefix="ibistatic-urlkeys-")
        self.path = os.path.join(self._folder, "spent.sqlite")
        self._owner = os.getpid()
        self._pid: int | None = None
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._spends = 0
        with self._lock:
            self._db().execute(
                "CREATE TABLE IF NOT EXISTS spent (key TEXT PRIMARY KEY, expiry REAL)"
            )
        atexit.register(self._remove)

    def first(self, key: str, expiry: float, now: float) -> bool:
        """Whether `key` is spent here for the first time; records it until `expiry`."""
        self._spends += 1
        if self._spends % self.PRUNE_EVERY == 0:
            self.prune(now)
        with self._lock:
            inserted = self._db().execute(
                "INSERT OR IGNORE INTO spent VALUES (?, ?)", (key, expiry)
            )
            return inserted.rowcount == 1

    def prune(self, now: float) -> None:
        """Forget the keys expired at `now` (an expired key is refused before it gets here)."""
        with self._lock:
            self._db().execute("DELETE FROM spent WHERE expiry <= ?", (now,))

    def __len__(self) -> int:
        with self._lock:
            return self._db().execute("SELECT COUNT(*) FROM spent").fetchone()[0]

    def _db(self) -> sqlite3.Connection:
        """This process's connection (a connection must not cross a fork)."""
        if self._pid != os.getpid():
            connection = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=OFF")  # a crash loses only the record
            self._connection, self._pid = connection, os.getpid()
        return self._connection

    def _remove(self) -> None:
        if os.getpid() == self._owner:
            shutil.rmtree(self._folder, ignore_errors=True)


def ack_record(query: Mapping[str, str], client_ip: str | None, when: float) -> dict:
    """The JSON record of an acknowledgment's decoded pairs (Table 6.11); a UsageError
    names a required pair that is missing."""
    for name in REQUIRED:
        if not query.get(name):
            raise UsageError(f"acknowledgment without {name} (Table 6.11 requires it)")
    return {
        "time": record_time(when),
        "ibi": query.get("ibi", ""),
        "url": query["url"],
        "url.persistent": query["url.persistent"],
        "contenttype": query["contenttype"],
        "state": query.get("state", ""),
        "clientinformation.ipaddress": query["clientinformation.ipaddress"],
        "resolver": client_ip,
    }


def record_time(when: float) -> str:
    """An ack record's time (UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


class AckLog:
    """Counts accepted acknowledgments per item and appends each to a JSON-lines file
    (when given one): one line per access, written whole and flushed."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._file = None
        if self.path is not None:
            try:
                self._file = self.path.open("a", encoding="utf-8")
            except OSError as error:
                raise UsageError(
                    f"--ack-log {self.path}: cannot append: {error.strerror}"
                ) from None

    def add(self, record: dict) -> None:
        """Count `record` (an ack_record) and append it."""
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        self.add_lines([line], {record["ibi"]: 1})

    def add_lines(self, lines: list[str], counts: Mapping[str, int]) -> None:
        """Append `lines` (records as JSON, each ending in a newline) in one write and
        add `counts` (accesses per item) to the counts, under one lock."""
        if not lines:
            return
        with self._lock:
            for ibi, count in counts.items():
                self.counts[ibi] = self.counts.get(ibi, 0) + count
            if self._file is not None:
                self._file.write("".join(lines))
                self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


@dataclass
class ItemCount:
    """The accesses of one item: how many, when first and last, by content type."""

    ibi: str
    count: int = 0
    first: str = ""
    last: str = ""
    by_type: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "ibi": self.ibi,
            "count": self.count,
            "first": self.first,
            "last": self.last,
            "contenttype": dict(sorted(self.by_type.items())),
        }


def summarise(lines: Iterable[str], where: str) -> tuple[list[ItemCount], list[str]]:
    """Accesses per item from ack-log lines, most accessed first, and a message for each
    line that is not an ack record (naming `where` and the line number)."""
    counts: dict[str, ItemCount] = {}
    problems: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            ibi, when = record["ibi"], record["time"]
            kind = record.get("contenttype", "")
        except (ValueError, KeyError, TypeError) as error:
            kind_of = "no key " + str(error) if isinstance(error, KeyError) else "not JSON"
            problems.append(f"{where}:{number}: not an acknowledgment record ({kind_of})")
            continue
        item = counts.setdefault(ibi, ItemCount(ibi))
        item.count += 1
        item.first = min(item.first or when, when)
        item.last = max(item.last, when)
        item.by_type[kind] = item.by_type.get(kind, 0) + 1
    ordered = sorted(counts.values(), key=lambda item: (-item.count, item.ibi))
    return ordered, problems
