"""The resolver's answer cache: bounded by bytes, entries expiring, keyed so that clients
who would get the same answer share one entry.

A persistent URL's answer depends on the client's languages only when it asks for a
translation without naming the language (``+``, ``GetTranslation``): for those, the key
holds the client's language tags, normalized (parsed, lower case, most preferred first,
without repeats or ``q=0``); for every other URL the Accept-Language header plays no part.
A raw header in the key would let each client variation of it (or an attacker's) make a
new entry.  Expired entries are never served, and they are dropped from the oldest end
as new ones come; past :attr:`AnswerCache.max_bytes` the oldest go first.
"""

from __future__ import annotations

import time
from collections import OrderedDict

__all__ = ["AnswerCache", "language_key", "BY_LANGUAGE", "MAX_LANGUAGES"]

#: the most language tags of a client's preference that are read
MAX_LANGUAGES = 16
#: what the cache holds under (target, None) for a URL whose answer depends on languages
BY_LANGUAGE = object()
#: the bytes an entry costs besides its own (the dict slot, the tuple, the key)
ENTRY_OVERHEAD = 256


def language_key(accept_language: str | None) -> tuple[str, ...]:
    """The client's preferred language tags, normalized (module docstring)."""
    from ..core.languages import parse_accept_language

    if not accept_language:
        return ()
    tags: list[str] = []
    for tag, _ in parse_accept_language(accept_language[:4096]):
        tag = tag.lower()
        if tag != "*" and tag not in tags:
            tags.append(tag)
            if len(tags) == MAX_LANGUAGES:
                break
    return tuple(tags)


class AnswerCache:
    """{key: value} for at most `seconds` each, at most `max_bytes` in all (as the caller
    counts them); oldest first out."""

    def __init__(self, max_bytes: int, clock=time.monotonic) -> None:
        self.max_bytes, self.clock = max_bytes, clock
        self.bytes = 0
        self._entries: OrderedDict = OrderedDict()  # key -> (expiry, size, value)

    def get(self, key):
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            self._drop(key)
            return None
        return entry[2]

    def put(self, key, value, size: int, seconds: float) -> None:
        if seconds <= 0 or size > self.max_bytes:
            return
        if key in self._entries:
            self._drop(key)
        size += ENTRY_OVERHEAD
        self._entries[key] = (self.clock() + seconds, size, value)
        self.bytes += size
        self._trim()

    def _trim(self) -> None:
        now = self.clock()
        entries = self._entries
        while entries:
            key, (expiry, _, _) = next(iter(entries.items()))
            if self.bytes <= self.max_bytes and expiry > now:
                return
            self._drop(key)

    def _drop(self, key) -> None:
        self.bytes -= self._entries.pop(key)[1]

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)
