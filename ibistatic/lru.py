"""A bounded least-recently-used cache: at most so many entries and so many bytes.

The server keeps answers, items and index shards for the next request, and a public
server is asked for ever new URLs: every cache it keeps must stop growing somewhere.
The size of an entry is what `cost` says it is (an estimate: the bytes of the file it
was read from, the characters of the strings it holds); entries past either bound are
dropped, the least recently used first.  Thread-safe (WSGI servers answer from threads).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["LruCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    def __init__(
        self,
        max_entries: int,
        max_bytes: int | None = None,
        cost: Callable[[K, V], int] | None = None,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._cost = cost or (lambda key, value: 1)
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0  # the sum of the costs of the entries kept

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    def get(self, key: K, default=None):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return default
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: K, value: V) -> None:
        size = self._cost(key, value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if self.max_bytes is not None and size > self.max_bytes:
                return  # larger than the whole cache: used once, kept by no one
            self._entries[key] = (value, size)
            self.bytes += size
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def _evict(self) -> None:
        entries = self._entries
        while len(entries) > self.max_entries or (
            self.max_bytes is not None and self.bytes > self.max_bytes
        ):
            _, (_, size) = entries.popitem(last=False)
            self.bytes -= size
