"""The plan of a build: which items it renders again, and how it publishes (pure).

A full build renders every item into a new generation.  An update renders the *affected*
items only: the changed items themselves and every item that reaches one of them through
references (next-edition, metadata, translations), because resolution only ever consults
items reachable that way; the other items' pages are unchanged by that definition.  The
rule, checked by the tests, is that an update gives the same tree as a full build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from ..archive.load import LoadedArchives
from ..core.storage import LastPublished
from ..index.writer import dumps, manifest_of, shard_digits
from ..store.files import digest
from .state import State

__all__ = ["Plan", "plan_build", "holdings_by_key", "last_published", "nothing_to_do"]


@dataclass(frozen=True)
class Plan:
    """What one build does."""

    full: bool  # every file into a new generation (else an update of the live one)
    items: dict[str, tuple]  # repository key -> ((item, files), ...) over the Archives, in order
    changed: frozenset[str]  # repositories whose items changed: their index records are made again
    affected: frozenset[str]  # `changed` and those reaching them: their pages are made again
    reverse: dict[str, frozenset[str]]  # index key named by a reference -> repositories naming it
    key_count: int  # distinct index keys of `items`

    @property
    def digits(self) -> int:
        return shard_digits(self.key_count)

    def rendered(self) -> tuple[str, ...]:
        """The affected repositories still held, in order: those whose pages are made."""
        return self._rendered

    @cached_property  # a build asks three times, its other core idle
    def _rendered(self) -> tuple[str, ...]:
        return tuple(sorted(key for key in self.affected if key in self.items))

    def describe(self) -> str:
        if self.full:
            return "full"
        return f"update of {len(self.changed)} changed, {len(self.affected)} affected items"


def nothing_to_do(plan: Plan, loaded: LoadedArchives, last: State | None) -> bool:
    """Whether `last` already publishes `loaded` as is: an update in which no item
    changed (so no page, index shard, sitemap or host file would) and whose manifest,
    the one site file that also counts the Archives' problems, has the same bytes.
    Such a rebuild costs the crawl's stat calls, not the site's size."""
    if last is None or plan.full or plan.changed or plan.affected:
        return False
    shards = sum(1 for path in last.checksums if path.startswith("index/shards/"))
    manifest = dumps(manifest_of(loaded, last.digits, len(last.records), shards))
    return digest(manifest) == last.digests.get("index/manifest.json")


def plan_build(loaded: LoadedArchives, last: State | None) -> Plan:
    """A full build when there is no usable `last` state (or the shard layout changes),
    else an update of what changed since."""
    if last is None:
        return _full_plan(loaded)
    old = last.items
    if loaded.touched is not None:  # watch: only these repositories were read again
        items = _patched_items(loaded, old)
        candidates = loaded.touched
        key_count = last.key_count + sum(
            len(_index_keys(items.get(k, ()))) - len(_index_keys(old.get(k, ())))
            for k in candidates
        )
    else:
        items = holdings_by_key(loaded)
        candidates = items.keys() | old.keys()
        key_count = _key_count(items)
    if shard_digits(key_count) != last.digits:
        return _full_plan(loaded)  # the shard layout changes: rewrite everything
    changed = {k for k in candidates if not _same_holdings(items.get(k), old.get(k))}
    reverse = patched_references(last.reverse, old, items, changed)
    affected = _affected(
        changed,
        reverse,
        lambda key: _index_keys(items.get(key, ())) | _index_keys(old.get(key, ())),
    )
    return Plan(False, items, frozenset(changed), frozenset(affected), reverse, key_count)


def _full_plan(loaded: LoadedArchives) -> Plan:
    items = holdings_by_key(loaded)
    every = frozenset(items)
    return Plan(True, items, every, every, _references(items), _key_count(items))


def holdings_by_key(loaded: LoadedArchives) -> dict[str, tuple]:
    found: dict[str, list] = {}
    for item in loaded.holdings.all_items():
        found.setdefault(item.key, []).append((item, (item.files, item.files_stamp)))
    return {key: tuple(value) for key, value in found.items()}


def _held(loaded: LoadedArchives, key: str) -> tuple:
    """((item, (files, files_stamp)), ...) of the repository `key` over the Archives, in
    order: Item's equality leaves its files out, and a changed file list or document
    changes the pages all the same."""
    holdings = loaded.holdings
    return tuple(
        (item, (item.files, item.files_stamp))
        for info in holdings.archives
        if (item := holdings.by_archive[info.name].get(key)) is not None and item.key == key
    )


def _patched_items(loaded: LoadedArchives, items: dict[str, tuple]) -> dict[str, tuple]:
    """`items` (the last build's) with the repositories `loaded.touched` read again."""
    patched = items.copy()  # a table clone: dict() inserts each entry again once any was popped
    for key in loaded.touched:
        held = _held(loaded, key)
        if held:
            patched[key] = held
        else:
            patched.pop(key, None)
    return patched


def last_published(items: dict[str, tuple]) -> LastPublished:
    """Who held each IBI in the build that published `items` (read only on a clash)."""
    return LastPublished(lambda: (item for held in items.values() for item, _ in held))


def _same_holdings(held: tuple | None, other: tuple | None) -> bool:
    """Equal items, spelled alike on disk: a repository name's equality ignores case, but
    its pages and file URLs do not (a case variant that takes over a withdrawn holder's
    IBI changes them)."""
    return held == other and [item.repository.text for item, _ in held or ()] == [
        item.repository.text for item, _ in other or ()
    ]


def _index_keys(held: tuple) -> set[str]:
    return {k for item, _ in held for k in item.keys()}


def _key_count(items: dict[str, tuple]) -> int:
    return len({k for held in items.values() for item, _ in held for k in item.keys()})


def _named(held: tuple) -> set[str]:
    """The index keys the items of one repository refer to."""
    named = set()
    for item, _ in held:
        for ibi in (item.next_edition, item.metadata, *(ibi for _, ibi in item.translations)):
            if ibi is not None:
                named.add(ibi.key)
    return named


def _references(items: dict[str, tuple]) -> dict[str, frozenset[str]]:
    """index key -> repository keys of the items naming it."""
    reverse: dict[str, set[str]] = {}
    for key, held in items.items():
        for named in _named(held):
            reverse.setdefault(named, set()).add(key)
    return {named: frozenset(keys) for named, keys in reverse.items()}


def patched_references(
    reverse: dict[str, frozenset[str]],
    old: dict[str, tuple],
    new: dict[str, tuple],
    keys: Iterable[str],
) -> dict[str, frozenset[str]]:
    """`reverse` (of `old`) made that of `new`, where only the repositories `keys` differ."""
    patched = reverse.copy()  # as _patched_items
    for key in keys:
        before, after = _named(old.get(key, ())), _named(new.get(key, ()))
        for named in before - after:
            patched[named] = patched[named] - {key}
            if not patched[named]:
                del patched[named]
        for named in after - before:
            patched[named] = patched.get(named, frozenset()) | {key}
    return patched


def _affected(
    changed: set[str], reverse: dict[str, frozenset[str]], index_keys: Callable[[str], set[str]]
) -> set[str]:
    """`changed` and every repository that reaches one of them through references
    (`index_keys(repository key)`: the keys a repository is named by, before or after)."""
    affected = set(changed)
    frontier = list(changed)
    while frontier:
        for named in index_keys(frontier.pop()):
            for referrer in reverse.get(named, ()):
                if referrer not in affected:
                    affected.add(referrer)
                    frontier.append(referrer)
    return affected
