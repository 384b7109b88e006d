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
import collections
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

__all__ = ["CHANGES", "Changes", "PerRepository", "FirstByPath"]

#: where State.memo keeps its Changes (site.facts.fold_facts writes it)
CHANGES = "changes"

#: past this many keys added or removed at once, joining every entry again is quicker
_AGAIN = 1000


class Changes:
    """The repository keys each build of one state replaced in its per-repository tables
    (fold_facts), numbered: a PerRepository that joined after build n looks, at its next
    call, at the entries of the keys the builds after n changed only.  Looking at the
    identity of each of 100,000 entries took 40-90 ms per table, three tables per watch
    republish.  Keeps the last `logged` builds' keys; one that joined before them looks
    at every entry again.  Only for the tables fold_facts changes by repository: the
    state's `published` and `item_files`."""

    def __init__(self, logged: int = 64) -> None:
        self.builds = 0
        self._log: collections.deque = collections.deque(maxlen=logged)

    def add(self, keys: Iterable[str] | None) -> None:
        """The keys build number `builds + 1` changed (come, gone or replaced); None:
        every key (a full build), not listed."""
        self.builds += 1
        self._log.append((self.builds, None if keys is None else frozenset(keys)))

    def since(self, build: int) -> set[str] | None:
        """The keys the builds after `build` changed; None when not all are logged."""
        logged = [keys for number, keys in self._log if number > build]
        if len(logged) != self.builds - build or None in logged:
            return None
        return set().union(*logged)


class PerRepository:
    """`make(entry)` (a list) for every entry of a table, joined in key order, kept: a
    later call makes again only the entries that are other objects than at the last
    call, and splices their rows in.  A republish costs a look at each entry's
    identity (C loops), not a call per entry."""

    def __init__(self, make: Callable[[Any], list]) -> None:
        self.make = make
        self._keys: list[str] = []  # sorted
        self._known: set[str] = set()
        self._entries: list[Any] = []  # the entry each key's rows were made from
        self._counts: list[int] = []  # how many rows each key has in `_rows`
        self._rows: list = []
        #: what the last call changed: (key, its rows before, its rows now) of each key
        #: made again, come or gone; None when every entry was made again (FirstByPath)
        self.changes: list[tuple[str, list, list]] | None = None
        self.calls = 0  # of joined(): a FirstByPath that missed one starts again
        self._build: int | None = None  # Changes.builds at the last call

    def joined(self, table: Mapping[str, Any], changes: Changes | None = None) -> list:
        """The rows of every entry of `table` in key order (the memo's own list: read it,
        never change it).  `changes`: the log of the keys each build changed in `table`
        (then only theirs are looked at); None: every entry's identity is."""
        since = None if changes is None or self._build is None else changes.since(self._build)
        self._build = None if changes is None else changes.builds
        self.changes = []
        self.calls += 1
        if since is None or not self._keys:
            return self._scanned(table)
        if len(since) > _AGAIN:
            self._again(table)
            return self._rows
        for key in sorted(since):
            self._settle(key, table.get(key))
        return self._rows

    def _settle(self, key: str, entry: Any) -> None:
        """The rows of `key` made those of `entry` (None: the key is gone)."""
        at = bisect.bisect_left(self._keys, key)
        held = at < len(self._keys) and self._keys[at] == key
        if held and entry is None:
            self._remove(at)
            self._known.discard(key)
        elif not held and entry is not None:
            self._insert(at, key, entry)
            self._known.add(key)
        elif held and entry is not self._entries[at]:
            self._replace(at, entry)

    def _scanned(self, table: Mapping[str, Any]) -> list:
        """joined() by a look at the identity of every entry."""
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

    def placed(self) -> Iterator[tuple[str, int, Any]]:
        """(key, place among its rows, row) of every row, in order."""
        for key, count, start in zip(
            self._keys, self._counts, itertools.accumulate(self._counts, initial=0)
        ):
            for place in range(count):
                yield key, place, self._rows[start + place]

    def _again(self, table: Mapping[str, Any]) -> None:
        self.changes = None
        self._keys = sorted(table)
        self._known = set(self._keys)
        self._entries = [table[key] for key in self._keys]
        made = [self.make(entry) for entry in self._entries]
        self._counts = [len(rows) for rows in made]
        self._rows = list(itertools.chain.from_iterable(made))

    def _start(self, at: int) -> int:
        return sum(itertools.islice(self._counts, at))  # C loops

    def _remove(self, at: int) -> None:
        start = self._start(at)
        self.changes.append((self._keys[at], self._rows[start : start + self._counts[at]], []))
        del self._rows[start : start + self._counts[at]]
        del self._keys[at], self._entries[at], self._counts[at]

    def _insert(self, at: int, key: str, entry: Any) -> None:
        rows = self.make(entry)
        start = self._start(at)
        self._rows[start:start] = rows
        self.changes.append((key, [], rows))
        self._keys.insert(at, key)
        self._entries.insert(at, entry)
        self._counts.insert(at, len(rows))

    def _replace(self, at: int, entry: Any) -> None:
        rows = self.make(entry)
        start = self._start(at)
        self.changes.append((self._keys[at], self._rows[start : start + self._counts[at]], rows))
        self._rows[start : start + self._counts[at]] = rows
        self._entries[at] = entry
        self._counts[at] = len(rows)


class FirstByPath:
    """The first row of each path among a PerRepository's rows (in their order: by key,
    then by place in the key's rows), sorted by path, with `text(row)` of each, kept:
    hostfiles.first_by_path of the joined rows, and the lines of a host file.  A later
    call moves only the rows of the keys that changed (PerRepository.changes), with
    `bisect`: sorting every rule and making their lines again were most of a portable
    republish.

    Holds every row once more, as (path, key, place, row) in that order, and the text
    of each first row: memory that grows with the site (watch only, with the portable
    output)."""

    def __init__(self, path: Callable[[Any], str], text: Callable[[Any], str]) -> None:
        self.path = path
        self.text = text
        self._all: list[tuple] = []  # (path, key, place, row) of every row, sorted
        self._firsts: list = []  # the first row of each path, sorted by path
        self.texts: list[str] = []  # text() of each of _firsts
        self._calls = -1  # the PerRepository.calls this is level with

    def update(self, rows: PerRepository) -> list:
        """The first rows by path after rows.joined(...) (the memo's own list)."""
        level, self._calls = rows.calls == self._calls + 1, rows.calls
        if rows.changes is None or not self._all or not level:
            self._again(rows)
            return self._firsts
        moved: set[str] = set()
        for key, before, now in rows.changes:
            for place, row in enumerate(before):
                path = self.path(row)
                at = bisect.bisect_left(self._all, (path, key, place))
                if self._all[at : at + 1] != [(path, key, place, row)]:  # never: a bug
                    raise RuntimeError(f"host rules out of step at {path!r} of {key!r}")
                del self._all[at]
                moved.add(path)
            for place, row in enumerate(now):
                path = self.path(row)
                bisect.insort(self._all, (path, key, place, row))
                moved.add(path)
        for path in moved:
            self._settle(path)
        return self._firsts

    def _again(self, rows: PerRepository) -> None:
        self._all = sorted((self.path(row), key, place, row) for key, place, row in rows.placed())
        first = {}  # path -> its first row, the paths from the last: the first is set last
        for path, _, _, row in reversed(self._all):
            first[path] = row
        self._firsts = list(first.values())[::-1]
        self.texts = list(map(self.text, self._firsts))

    def _settle(self, path: str) -> None:
        """_firsts and texts right for `path`, whose rows moved."""
        at = bisect.bisect_left(self._all, (path,))
        first = self._all[at][3] if at < len(self._all) and self._all[at][0] == path else None
        where = bisect.bisect_left(self._firsts, path, key=self.path)
        held = where < len(self._firsts) and self.path(self._firsts[where]) == path
        if first is None:
            if held:
                del self._firsts[where], self.texts[where]
        elif not held:
            self._firsts.insert(where, first)
            self.texts.insert(where, self.text(first))
        elif self._firsts[where] is not first:
            self._firsts[where] = first
            self.texts[where] = self.text(first)
