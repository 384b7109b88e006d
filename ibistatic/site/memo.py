"""What a site output keeps between the builds of one state (``State.memo``: in memory,
never saved), so that a republish (watch) costs what changed, not what the site holds.

A state's per-repository tables (published URLs, item pages, answers) are updated in
place by each build (site.facts.fold_facts): the entries of the affected repositories
are replaced by new objects, every other entry stays the very same object.  So a value
made from an entry stays right for as long as the table holds that same object; the
memo keeps the entry with the value and compares identities, never contents.  A full
build starts a new State, and with it an empty memo; a failed build drops its state.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["PerRepository"]

#: past this many keys added or removed at once, joining every entry again is quicker
_AGAIN = 1000


class PerRepository:
    """`make(entry)` (a list) for every entry of a table, joined in key order, kept: a
    later call makes again only the entries that are other objects than at the last
    call, and splices their rows in.  At 100,000 repositories a republish costs a
    look at each entry's identity (C loops), not 100,000 calls."""

    def __init__(self, make: Callable[[Any], list]) -> None:
        self.make = make
        self._keys: list[str] = []  # sorted
        self._known: set[str] = set()
        self._entries: list[Any] = []  # the entry each key's rows were made from
        self._counts: list[int] = []  # how many rows each key has in `_rows`
        self._rows: list = []

    def joined(self, table: Mapping[str, Any]) -> list:
        """The rows of every entry of `table` in key order (the memo's own list: read it,
        never change it)."""
        now = list(map(table.get, self._keys))  # None: a key gone (no entry is None)
        went = (
            list(itertools.compress(self._keys, map(operator.is_, now, itertools.repeat(None))))
            if None in now
            else []
        )
        coming = len(table) - (len(self._keys) - len(went))
        came = table.keys() - self._known if coming else ()
        if len(came) + len(went) > _AGAIN or not self._keys:
            self._again(table)
            return self._rows
        if came or went:
            for key in went:
                self._remove(bisect.bisect_left(self._keys, key))
            for key in sorted(came):
                self._insert(bisect.bisect_left(self._keys, key), key, table[key])
            self._known = set(self._keys)
            now = list(map(table.__getitem__, self._keys))
        for at in itertools.compress(itertools.count(), map(operator.is_not, now, self._entries)):
            self._replace(at, now[at])
        return self._rows

    def _again(self, table: Mapping[str, Any]) -> None:
        self._keys = sorted(table)
        self._known = set(self._keys)
        self._entries = [table[key] for key in self._keys]
        made = [self.make(entry) for entry in self._entries]
        self._counts = [len(rows) for rows in made]
        self._rows = list(itertools.chain.from_iterable(made))

    def _start(self, at: int) -> int:
        return sum(itertools.islice(self._counts, at))  # C loops: 1 ms at 100,000 keys

    def _remove(self, at: int) -> None:
        start = self._start(at)
        del self._rows[start : start + self._counts[at]]
        del self._keys[at], self._entries[at], self._counts[at]

    def _insert(self, at: int, key: str, entry: Any) -> None:
        rows = self.make(entry)
        start = self._start(at)
        self._rows[start:start] = rows
        self._keys.insert(at, key)
        self._entries.insert(at, entry)
        self._counts.insert(at, len(rows))

    def _replace(self, at: int, entry: Any) -> None:
        rows = self.make(entry)
        start = self._start(at)
        self._rows[start : start + self._counts[at]] = rows
        self._entries[at] = entry
        self._counts[at] = len(rows)
