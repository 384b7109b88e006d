"""urlkeys and acknowledgments: the Archive side of access counting (resolution-system §6.2).

Each urlRequest answer with a URL carries a fresh ``urlkey`` (Table 5.1 grammar); the
resolver sends it back in the ``acknowledgment`` of Table 6.11 when it returns that URL
to a reader.  An Archive that counts accesses must only count acknowledgments of keys it
issued, so keys here are unguessable (``secrets``), expire, and are spent on use.  Each
accepted acknowledgment is one access: a JSON line in the ack log (:class:`AckLog`),
summarised per item by ``ibistatic acks`` (:func:`summarise`).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError

__all__ = ["UrlKeys", "AckLog", "ack_record", "summarise", "ItemCount", "DEFAULT_KEY_SECONDS"]

#: how long an issued urlkey may be acknowledged (a resolver acknowledges at once)
DEFAULT_KEY_SECONDS = 600.0
#: the required pairs of an acknowledgment (Table 6.11, "obr.")
REQUIRED = (
    "clientinformation.ipaddress",
    "contenttype",
    "state",
    "url",
    "url.persistent",
    "urlkey",
)


class UrlKeys:
    """Issues unguessable urlkeys that expire after `seconds`, and spends them.

    ``seconds`` + ``-`` + 20 random digits (about 66 bits): the grammar of Table 5.1,
    ``10*DIGIT ["-" 10*DIGIT]``.  At most `capacity` keys are kept: when full, the
    oldest (the first to expire) go first, so memory is bounded under any load.
    """

    def __init__(
        self,
        seconds: float = DEFAULT_KEY_SECONDS,
        capacity: int = 1_000_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if seconds <= 0:
            raise UsageError(f"urlkey lifetime {seconds!r}: expected a positive number of seconds")
        self.seconds, self.capacity, self.clock = seconds, capacity, clock
        self._expiry: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self) -> str:
        """A fresh key, remembered until it expires."""
        key = f"{int(time.time()):010d}-{secrets.randbelow(10**20):020d}"
        now = self.clock()
        with self._lock:
            self._forget_expired(now)
            while len(self._expiry) >= self.capacity:
                self._expiry.popitem(last=False)
            self._expiry[key] = now + self.seconds
        return key

    def spend(self, key: str) -> bool:
        """Whether `key` was issued here and has not expired nor been spent; spends it."""
        with self._lock:
            expiry = self._expiry.pop(key, None)
        return expiry is not None and expiry > self.clock()

    def __len__(self) -> int:
        return len(self._expiry)

    def _forget_expired(self, now: float) -> None:
        # insertion order is expiry order (one lifetime for all keys)
        while self._expiry:
            key, expiry = next(iter(self._expiry.items()))
            if expiry > now:
                break
            del self._expiry[key]


def ack_record(query: Mapping[str, str], client_ip: str | None, when: float) -> dict:
    """The JSON record of an acknowledgment's decoded pairs (Table 6.11); a UsageError
    names a required pair that is missing."""
    for name in REQUIRED:
        if not query.get(name):
            raise UsageError(f"acknowledgment without {name} (Table 6.11 requires it)")
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)),
        "ibi": query.get("ibi", ""),
        "url": query["url"],
        "url.persistent": query["url.persistent"],
        "contenttype": query["contenttype"],
        "state": query["state"],
        "clientinformation.ipaddress": query["clientinformation.ipaddress"],
        "resolver": client_ip,
    }


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
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.counts[record["ibi"]] = self.counts.get(record["ibi"], 0) + 1
            if self._file is not None:
                self._file.write(line)
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
