"""What the build counts of the holdings at every publication, kept across patches.

The storage-model check walks every item in crawl order, the manifest and the landing
page count each Archive's items by state, and an Archive's default relations come from
the languages its items carry.  Made in one pass when first asked; a watch republish
then patches it with the items it re-read (ibistatic.core.storage.patch_holdings) instead
of walking every item again.  Pure: no I/O.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .model import Item

__all__ = ["Census", "path_order"]


def path_order(item: Item) -> str:
    """What sorts as the repository's four folder names do (a NUL sorts before any
    character of a name, as the end of a shorter name does), without splitting them."""
    return item.repository.text.replace("/", "\0")


@dataclass
class Census:
    """Per Archive: its items in path order, how many are in each state, and how many
    carry each language (their own, or one they name a translation in)."""

    ordered: dict[str, list[Item]]
    states: dict[str, Counter]
    languages: dict[str, Counter]

    @classmethod
    def of(cls, names: Sequence[str], by_archive: Mapping[str, Mapping[str, Item]]) -> Census:
        census = cls({}, {}, {})
        for name in names:
            unique = {id(item): item for item in by_archive.get(name, {}).values()}
            census.ordered[name] = sorted(unique.values(), key=path_order)
            census.states[name] = Counter(item.state for item in unique.values())
            census.languages[name] = Counter(
                tag for item in unique.values() for tag in _languages(item)
            )
        return census

    def crawl_order(self, names: Iterable[str]) -> list[Item]:
        """Every item, Archive by Archive in `names` order, each in path order."""
        return [item for name in names for item in self.ordered.get(name, ())]

    def patch(self, removed: Iterable[Item], added: Iterable[Item]) -> bool:
        """In place: without the items `removed`, with `added`.  False, and half patched,
        when an item to remove is not counted (the caller then counts again)."""
        for item in removed:
            items = self.ordered.get(item.archive, [])
            at = bisect.bisect_left(items, path_order(item), key=path_order)
            if at == len(items) or items[at] is not item:
                return False
            del items[at]
            self._count(item, -1)
        for item in added:
            bisect.insort(self.ordered.setdefault(item.archive, []), item, key=path_order)
            self._count(item, 1)
        return True

    def _count(self, item: Item, step: int) -> None:
        states = self.states.setdefault(item.archive, Counter())
        states[item.state] += step
        languages = self.languages.setdefault(item.archive, Counter())
        for tag in _languages(item):
            languages[tag] += step
        # a count down to zero is no count: the manifest and the relations read the keys
        for counter, key in ((states, item.state), *((languages, t) for t in _languages(item))):
            if counter[key] <= 0:
                del counter[key]


def _languages(item: Item) -> list[str]:
    return ([item.language] if item.language else []) + [tag for tag, _ in item.translations]
