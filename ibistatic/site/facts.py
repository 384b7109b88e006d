"""What the build learns of each item it renders, and what the state keeps of it.

Rendering an item resolves its persistent URLs (ibistatic.targets) once; besides its pages
that gives its :class:`Facts`: the URLs it publishes (which the site-wide outputs list),
its precomputed answers and index records (which the index output joins into shards).
Facts come back from forked workers: plain tuples, strings and bytes.  The functions
below fold them into the State, noting which index shards change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..archive.load import LoadedArchives
from ..index.writer import dumps, encoded_record, precomputed_answers
from ..store.files import pack
from ..targets import ListLike, PublishedUrls, published_urls
from .memo import CHANGES, Changes
from .plan import Plan
from .record import ItemUrls
from .state import State

__all__ = ["Facts", "PagePaths", "facts_of", "fold_facts", "carried_digests"]


@dataclass
class Facts:
    """What rendering a set of items gives besides their files."""

    published: dict[str, PublishedUrls] = field(default_factory=dict)  # repository key -> its URLs
    answers: dict[str, dict] = field(
        default_factory=dict
    )  # repository key -> {index key -> packed answers}
    records: dict[str, list] = field(
        default_factory=dict
    )  # repository key -> [(index key, archive, packed record)]
    item_files: dict[str, PagePaths] = field(
        default_factory=dict
    )  # repository key -> its file-list/metadata pages
    file_sums: dict[bytes, bytes] = field(default_factory=dict)  # archive.filesums, seen
    #: repository key -> why resolving or rendering it failed (site.item_phase)
    failed: dict[str, str] = field(default_factory=dict)

    def merge(self, part: Facts) -> None:
        for name in ("published", "answers", "records", "item_files", "file_sums", "failed"):
            getattr(self, name).update(getattr(part, name))


class PagePaths(ListLike, Sequence[str]):
    """The paths of one repository's remembered pages (its record, metadata and
    file-list pages), in order, kept as their shape around the repository's key: a path
    that holds it as a folder is prefix + key + suffix.  The state keeps one per
    repository: lists of the paths themselves took hundreds of bytes each; a shape is
    one tuple, shared by every repository whose pages are
    alike, and the key is the table's own."""

    __slots__ = ("key", "shape")

    def __init__(self, key: str, shape: tuple[tuple[str, str | None], ...]) -> None:
        self.key = key
        # shared; not those with a whole path (suffix None), one of a kind each
        alike = all(suffix is not None for _, suffix in shape)
        self.shape = _SHAPES.setdefault(shape, shape) if alike else shape

    @classmethod
    def of(cls, key: str, paths: Iterable[str]) -> PagePaths:
        return cls(key, tuple(_shape(key, path) for path in paths))

    def __len__(self) -> int:
        return len(self.shape)

    def __getitem__(self, index):  # an int, or a slice (Sequence)
        if isinstance(index, slice):
            return [self[n] for n in range(len(self.shape))[index]]
        prefix, suffix = self.shape[index]
        return prefix if suffix is None else prefix + self.key + suffix

    def __iter__(self) -> Iterator[str]:
        return (self[n] for n in range(len(self.shape)))

    def __reduce__(self):
        return PagePaths, (self.key, self.shape)


#: the shapes of PagePaths, one object each (unpickled ones too)
_SHAPES: dict[tuple, tuple] = {}


def _shape(key: str, path: str) -> tuple[str, str | None]:
    """(prefix, suffix) of `path` around its folder `key`; (path, None) if none is."""
    before, found, after = path.partition(f"/{key}/")
    if not found:
        return path, None
    return before + "/", "/" + after


def facts_of(
    loaded: LoadedArchives, plan: Plan, targets: dict[str, list], urls_of: ItemUrls
) -> Facts:
    """The facts of the items whose `targets` (repository key -> its PageTargets) these
    are; `urls_of`: their item_urls (site.record.ItemUrls)."""
    facts = Facts()
    for key, of_key in targets.items():
        facts.published[key] = published_urls(of_key)
        answers = precomputed_answers(of_key)
        if answers:
            facts.answers[key] = _packed_once(answers)
        if key in plan.changed:
            facts.records[key] = _records_of(loaded, plan.items[key], urls_of)
    return facts


def _packed_once(answers: dict[str, dict]) -> dict[str, bytes]:
    """index key -> its packed answers, packed once for the keys whose answers are the
    same: an item's repository name and IBIp answer alike, and the state then keeps
    one bytes object for both (half the packing was done twice)."""
    packed: dict[bytes, bytes] = {}
    result = {}
    for index_key, value in answers.items():
        data = dumps(value)
        result[index_key] = packed.get(data) or packed.setdefault(data, pack(data))
    return result


def _records_of(loaded: LoadedArchives, held: tuple, urls_of) -> list[tuple[str, str, bytes]]:
    """(index key, archive, packed record) of each item of one repository, for the
    keys under which its Archive holds it (a key another repository won is left out)."""
    rows = []
    for item, _ in held:
        record = None
        for index_key in item.keys():
            if loaded.holdings.by_archive[item.archive].get(index_key) is item:
                if record is None:
                    archive, data = encoded_record(loaded.view(item.archive), item, urls_of(item))
                    record = (archive, pack(data))
                rows.append((index_key, *record))
    return rows


def fold_facts(loaded: LoadedArchives, state: State, plan: Plan, facts: Facts) -> set[str]:
    """The state's tables made those of this build (in place: in a large build a copy
    costs time and memory), taking `facts`' own (not to be used after); returns the
    index keys whose records or answers may change (their shards are made again)."""
    for key in plan.affected:
        for table in (state.published, state.item_files):
            table.pop(key, None)
    state.published = _joined(state.published, facts.published)
    state.item_files = _joined(state.item_files, facts.item_files)
    # what the site outputs' memo looks at again (site.memo.Changes); a full build's
    # state is new, so is its memo: every key (a set of each, as large as the site) would
    # tell nobody anything
    log = state.memo.setdefault(CHANGES, Changes())
    log.add(None if plan.full else plan.affected.union(facts.published, facts.item_files))
    touched: set[str] = set()
    _fold_records(loaded, state, plan.changed, facts.records, touched)
    _fold_answers(state, plan.affected, facts.answers, touched)
    state.items, state.reverse, state.key_count = plan.items, plan.reverse, plan.key_count
    return touched


def _fold_records(
    loaded, state: State, changed: frozenset[str], fresh: dict[str, list], touched: set[str]
) -> None:
    """state.records with those of the `changed` repositories replaced by `fresh`."""
    old_keys = {k for key in changed for item, _ in state.items.get(key, ()) for k in item.keys()}
    new_keys = {index_key for key in changed for index_key, _, _ in fresh.get(key, ())}
    for key in old_keys | new_keys:
        state.records.pop(key, None)
        touched.add(key)
    for key in sorted(changed):
        # popped: the memory of its rows is free for the state's as they are made
        for index_key, archive, record in fresh.pop(key, ()):
            state.records.setdefault(index_key, []).append((archive, record))
    order = {info.name: n for n, info in enumerate(loaded.infos)}
    for key in new_keys:  # keep the Archives' order, whatever order changes came in
        if len(state.records[key]) > 1:
            state.records[key].sort(key=lambda row: order[row[0]])


def _fold_answers(
    state: State, affected: frozenset[str], fresh: dict[str, dict], touched: set[str]
) -> None:
    """state.answers with those of the `affected` repositories replaced by `fresh`."""
    for key in affected:
        touched.update(state.answers.pop(key, {}))
    for answers in fresh.values():
        touched.update(answers)
    state.answers = _joined(state.answers, fresh)


def _joined(table: dict, fresh: dict) -> dict:
    """`table` with the entries of `fresh` (a build's facts, not used after), or `fresh`
    itself when `table` is empty: a full build then keeps one table of each kind, where
    copying it held two (the fold added that much to the build process's peak)."""
    if not table:
        return fresh
    table.update(fresh)
    return table


def carried_digests(state: State, affected: frozenset[str]) -> tuple[dict[str, bytes], list[str]]:
    """The last build's digests of the files this one does not make again: every page
    but the affected items' (those of the other items are unchanged, by the definition
    of affected). One copy of the dict, not a look at each of 700,000 pages, made after
    the changed pages are out. With them, the paths left out: the only files this build
    may remove (Files.carry)."""
    # .copy(), not dict(): after the last republish's pops, dict() inserts each entry
    # again where copy() clones the table at once
    digests = state.digests.copy()
    dropped = [relative for key in affected for relative in _pages_of(state, key)]
    dropped += state.site_files
    for relative in dropped:
        digests.pop(relative, None)
    return digests, dropped


def _pages_of(state: State, key: str) -> list[str]:
    """The pages the last build wrote for the repository `key`."""
    return [url.path + "/index.html" for url in state.published.get(key, ())] + list(
        state.item_files.get(key, ())
    )
