"""The storage model across Archives (the resolution report §3) and reference checks.

1. The original of an item is stored in exactly one Archive.
2. Every item has an original somewhere (no copy without an original).
3. An Archive holds at most one item with a given IBI.
4. Copies keep the IBI of their original and may sit in many Archives.

Violations are reported as problems and kept: the resolver alerts on them ("conflict"
when two Archives claim the original, "no-original" when only copies exist).

Rule 3 and the uniqueness of an IBIp are different: one claimant holds the IBI and the
others are left out (or lose their IBIp).  Which one is decided so that a persistent
identifier never changes hands: the claimant that held it in the last build keeps it,
and only when none did (a first build, or a holder withdrawn from disk) does seniority
decide (see :func:`_seniority`).  The last build's holders come in as data
(:data:`Published`); this module reads nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import Problem
from .census import Census, path_order
from .identifiers import RepositoryName
from .model import ArchiveInfo, Item
from .relations import relation_problems

__all__ = [
    "Holdings",
    "LastPublished",
    "Published",
    "check_storage_model",
    "holdings_of",
    "index_items",
    "mark_originals",
    "patch_holdings",
    "published_holders",
    "storage_problems",
]


@dataclass
class Holdings:
    """Every Archive's items, indexed by IBI key (both forms), in resolution order."""

    archives: list[ArchiveInfo]
    by_archive: dict[str, dict[str, Item]] = field(default_factory=dict)
    conflicts: set[str] = field(default_factory=set)  # repository keys with 2+ originals
    orphans: set[str] = field(default_factory=set)  # repository keys with copies and no original
    #: keys (both forms) of the items in a rule-3 or IBIp clash: who wins depends on the
    #: other claimants, so a change touching them needs the whole check again
    contested: set[str] = field(default_factory=set)
    clash_problems: list[Problem] = field(default_factory=list)
    #: the items counted (core.census): made when first asked, patched by patch_holdings
    census: Census | None = field(default=None, repr=False, compare=False)
    #: items that claimed an IBIp the last build published for another repository, each
    #: with its problem: kept here without it, their last good publication may stand in
    #: (ibistatic.archive.load)
    taken: list[tuple[Item, Problem]] = field(default_factory=list)

    def counted(self) -> Census:
        if self.census is None:
            self.census = Census.of([info.name for info in self.archives], self.by_archive)
        return self.census

    def holders(self, key: str) -> list[tuple[ArchiveInfo, Item]]:
        found = []
        for info in self.archives:
            item = self.by_archive.get(info.name, {}).get(key)
            if item is not None:
                found.append((info, item))
        return found

    def all_items(self) -> Iterable[Item]:
        for info in self.archives:
            seen: set[int] = set()
            for item in self.by_archive.get(info.name, {}).values():
                if id(item) not in seen:
                    seen.add(id(item))
                    yield item


def _where(item: Item) -> str:
    return f"{item.repository.text}/item.yaml"


#: who held each IBI in the last build: index key -> ((Archive name, repository name),
#: ...) of the items published under it (see :func:`published_holders`)
Published = Mapping[str, tuple[tuple[str, RepositoryName], ...]]


def check_storage_model(
    archives: Sequence[ArchiveInfo],
    items: Iterable[Item],
    left_out: dict[str, str] | None = None,
    published: Published | None = None,
) -> tuple[Holdings, list[Problem]]:
    """Index items by key per Archive and report every storage-model violation.

    One repository of an Archive holds an IBI (rule 3) and one repository an IBIp: the
    one that held it in the last build (`published`), else the senior claimant
    (:func:`_seniority`).  `left_out` maps the keys of items left out for errors to
    their Archive, so references to them say so.
    """
    holdings = holdings_of(archives, items, published)
    return holdings, storage_problems(holdings, left_out or {})


def holdings_of(
    archives: Sequence[ArchiveInfo], items: Iterable[Item], published: Published | None = None
) -> Holdings:
    """The Holdings with every storage-model rule applied; the problems are left to
    :func:`storage_problems` (a pass over every item, which can wait)."""
    holdings = index_items(archives, items, published)
    mark_originals(holdings)
    return holdings


def published_holders(items: Iterable[Item]) -> dict[str, tuple[tuple[str, RepositoryName], ...]]:
    """The :data:`Published` table of the items a build published."""
    found: dict[str, list[tuple[str, RepositoryName]]] = {}
    for item in items:
        for key in item.keys():
            found.setdefault(key, []).append((item.archive, item.repository))
    return {key: tuple(holders) for key, holders in found.items()}


class LastPublished(Mapping):
    """The :data:`Published` table of a last build's items, made when first asked: only a
    clash asks, so a build without one never pays for it (a pass over every item)."""

    def __init__(self, items: Callable[[], Iterable[Item]]) -> None:
        self._items = items
        self._table: dict | None = None

    def _holders(self) -> dict[str, tuple[tuple[str, RepositoryName], ...]]:
        if self._table is None:
            self._table = published_holders(self._items())
        return self._table

    def __getitem__(self, key: str) -> tuple[tuple[str, RepositoryName], ...]:
        return self._holders()[key]

    def __iter__(self):
        return iter(self._holders())

    def __len__(self) -> int:
        return len(self._holders())


def index_items(
    archives: Sequence[ArchiveInfo], items: Iterable[Item], published: Published | None = None
) -> Holdings:
    """The Holdings of `items`, with the clashes of rule 3 and of IBIp uniqueness
    settled and recorded; conflicts and orphans are left to :func:`mark_originals`.

    A clash goes to the claimant that held the IBI in the last build (`published`):
    a newcomer never takes a published IBI.  Without one, to the senior claimant.
    The outcome does not depend on the order of `items`.
    """
    holdings = Holdings(list(archives), {info.name: {} for info in archives})
    seniority = _seniority(archives)
    published = published if published is not None else {}  # not `or`: len() would read it all
    reported: list[tuple[Item, Problem]] = []
    kept = _one_per_ibi(list(items), published, seniority, holdings, reported)
    kept = _one_repository_per_ibip(kept, published, seniority, holdings, reported)
    for item in kept:
        own = holdings.by_archive.setdefault(item.archive, {})
        for key in item.keys():
            own[key] = item
    order = {info.name: n for n, info in enumerate(archives)}
    reported.sort(
        key=lambda pair: (order.get(pair[0].archive, len(order)), pair[0].repository.parts)
    )  # crawl order
    holdings.clash_problems = [problem for _, problem in reported]
    return holdings


def _seniority(archives: Sequence[ArchiveInfo]) -> Callable[[Item], tuple]:
    """The order in which claimants of one IBI win it when none held it before (a first
    build): Archives in configuration order; within one, repository names ignoring case,
    then the all-lower-case spelling (the standard generates names so), then the others
    in byte order.  Crawl order for names without capitals."""
    order = {info.name: n for n, info in enumerate(archives)}

    def seniority(item: Item) -> tuple:
        return (
            order.get(item.archive, len(order)),
            item.key,
            item.repository.text != item.key,
            item.repository.parts,
        )

    return seniority


def _one_per_ibi(
    items: list[Item], published: Published, seniority, holdings: Holdings, reported: list
) -> list[Item]:
    """Rule 3: one item per repository name in an Archive (its folders may differ in case
    only); the others are left out and reported."""
    first: dict[tuple[str, str], Item] = {}
    clashes: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        where = (item.archive, item.key)
        other = first.setdefault(where, item)
        if other is not item:
            clashes.setdefault(where, [other]).append(item)
    left_out: set[int] = set()
    for (archive, key), claimants in clashes.items():
        spellings = {name.text for held_in, name in published.get(key, ()) if held_in == archive}
        holder, held_before = _holder(
            claimants, seniority, lambda item: item.repository.text in spellings
        )
        for item in claimants:
            if item is not holder:
                left_out.add(id(item))
                reported.append((item, _second_item(item, holder, held_before)))
        holdings.contested.update(k for item in claimants for k in item.keys())
    return [item for item in items if id(item) not in left_out] if left_out else items


def _one_repository_per_ibip(
    items: list[Item], published: Published, seniority, holdings: Holdings, reported: list
) -> list[Item]:
    """An IBIp names one repository (copies in several Archives share it): the other
    claimants keep their items without it, and are reported."""
    claims: dict[str, list[Item]] = {}
    for item in items:
        if item.ibip is not None:
            claims.setdefault(item.ibip.key, []).append(item)
    losers: set[int] = set()
    for ibip, claimants in claims.items():
        if len(claimants) == 1 or len({item.key for item in claimants}) == 1:
            continue
        owners = {name.key for _, name in published.get(ibip, ())}
        holder, held_before = _holder(claimants, seniority, lambda item: item.key in owners)
        for item in claimants:
            if item.key != holder.key:
                losers.add(id(item))
                problem = _second_ibip(item, holder, held_before)
                reported.append((item, problem))
                if held_before:
                    holdings.taken.append((item, problem))
        holdings.contested.update(k for item in claimants for k in item.keys())
    return (
        [_without_ibip(item) if id(item) in losers else item for item in items] if losers else items
    )


def _holder(
    claimants: list[Item], seniority, held_before: Callable[[Item], bool]
) -> tuple[Item, bool]:
    """Who keeps a contested IBI: the claimant that held it in the last build, else the
    senior one; and whether it held it."""
    ordered = sorted(claimants, key=seniority)
    holder = next((item for item in ordered if held_before(item)), None)
    return (ordered[0], False) if holder is None else (holder, True)


def _second_item(item: Item, holder: Item, held_before: bool) -> Problem:
    found = f"the IBI of {holder.repository.text} again"
    expected = "at most one item per IBI in an Archive (storage model, rule 3)"
    if held_before:
        found += f", published for {holder.repository.text} by an earlier build"
        expected += "; a published IBI never changes hands"
    return Problem(item.archive, _where(item), "", found, expected)


def _second_ibip(item: Item, holder: Item, held_before: bool) -> Problem:
    where = f"{holder.repository.text} in {holder.archive}"
    if held_before:
        found, expected = (
            f"published for {where} by an earlier build",
            "an IBIp no other repository claims (a published IBI never changes hands)",
        )
    else:
        found, expected = f"already the IBIp of {where}", "an IBIp no other repository claims"
    assert item.ibip is not None  # only an item with an IBIp claims another's
    return Problem(item.archive, _where(item), "ibip", f"{item.ibip.text!r}, {found}", expected)


def storage_problems(holdings: Holdings, left_out: dict[str, str]) -> list[Problem]:
    """Every violation of the storage model and every bad reference, in a stable order.

    Each watch republish asks for them whole (the manifest counts them): the passes
    below skip, at the cost of one test, the items that cannot have the problem (a key
    held once, an item naming no other), which at 100,000 items are nearly all."""
    ordered = _crawl_order(holdings)
    known = _FirstHolders(holdings)
    return (
        holdings.clash_problems
        + _service_problems(holdings)
        + _original_problems(holdings)
        + _reference_problems(ordered, known, left_out)
        + relation_problems(holdings.archives, ordered)
    )


class _FirstHolders:
    """index key -> the first item in crawl order that answers to it, looked up when
    asked instead of a dict of every key made first: the holder in the first Archive
    that has one.  An Archive holds each item under every key it answers to (a claimant
    that loses a clash is left out, or kept without the IBIp it lost), so no item of
    that Archive answers to the key before its holder."""

    def __init__(self, holdings: Holdings) -> None:
        self._indexes = [holdings.by_archive.get(info.name, {}) for info in holdings.archives]

    def get(self, key: str) -> Item | None:
        for index in self._indexes:
            item = index.get(key)
            if item is not None:
                return item
        return None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key: str) -> Item:
        item = self.get(key)
        if item is None:
            raise KeyError(key)
        return item


def mark_originals(holdings: Holdings, keys: Iterable[str] | None = None) -> None:
    """Set `conflicts` (2+ originals) and `orphans` (copies only) for `keys`, or all."""
    if keys is None:
        held: dict[str, list[Item]] = {}
        for item in holdings.all_items():
            held.setdefault(item.key, []).append(item)
        holdings.conflicts.clear()
        holdings.orphans.clear()
        pairs: Iterable[tuple[str, list[Item]]] = held.items()
    else:
        pairs = (
            (key, [item for _, item in holdings.holders(key) if item.key == key]) for key in keys
        )
    for key, items in pairs:
        originals = sum(1 for i in items if i.state == "Original")
        holdings.conflicts.discard(key)
        holdings.orphans.discard(key)
        if originals > 1:
            holdings.conflicts.add(key)
        elif not originals and any(i.state == "Copy" for i in items):
            holdings.orphans.add(key)


def patch_holdings(
    previous: Holdings, removed: Sequence[Item], added: Sequence[Item]
) -> Holdings | None:
    """The holdings without the items `removed` and with `added` (the same rules as
    :func:`index_items` over the whole crawl), in time proportional to the change.

    `previous` is updated in place (copying an Archive's index of 200,000 keys would be
    most of the time a watched deposit takes); it must not be used afterwards.  None,
    with `previous` untouched, when the change could alter who wins a clash (an item of it
    is contested, or it claims a key or an IBIp another item holds): then only the whole
    check is exact.
    """
    if any(key in previous.contested for item in (*removed, *added) for key in item.keys()):
        return None
    if not {item.archive for item in (*removed, *added)} <= previous.by_archive.keys():
        return None
    leaving = {id(item) for item in removed}

    def held_by_another(items: dict[str, Item], key: str, item: Item) -> bool:
        owner = items.get(key)
        return (
            owner is not None and id(owner) not in leaving and owner.repository != item.repository
        )

    claimed: dict[tuple[str, str], Item] = {}
    for item in added:
        own = previous.by_archive[item.archive]
        for key in item.keys():
            if (own.get(key) is not None and id(own[key]) not in leaving) or (
                item.archive,
                key,
            ) in claimed:
                return None  # rule 3
            claimed[(item.archive, key)] = item
        if item.ibip is not None:
            ibip = item.ibip.key
            if any(held_by_another(items, ibip, item) for items in previous.by_archive.values()):
                return None  # the IBIp is another repository's
            if any(
                key == ibip and other.repository != item.repository
                for (_, key), other in claimed.items()
            ):
                return None
    for item in removed:
        own = previous.by_archive[item.archive]
        for key in item.keys():
            if own.get(key) is item:
                del own[key]
    for item in added:
        own = previous.by_archive[item.archive]
        for key in item.keys():
            own[key] = item
    census = previous.census
    if census is not None and not census.patch(removed, added):
        census = None  # counted again when asked
    holdings = Holdings(
        previous.archives,
        previous.by_archive,
        set(previous.conflicts),
        set(previous.orphans),
        previous.contested,
        previous.clash_problems,
        census,
    )
    mark_originals(holdings, {item.key for item in (*removed, *added)})
    return holdings


def _without_ibip(item: Item) -> Item:
    from dataclasses import replace

    return replace(item, ibip=None)


def _crawl_order(holdings: Holdings) -> list[Item]:
    """Every item in crawl order (Archive order, then repository path), whatever order
    the holdings were filled in: problems come out the same after a patch."""
    return holdings.counted().crawl_order(info.name for info in holdings.archives)


def _service_problems(holdings: Holdings) -> list[Problem]:
    """An Archive's service is itself an identified, non-transferable original item
    (§3 rule 5): each Archive must hold its service-ibi so (a warning: the answers that
    name it, ibi.archiveservice, stand either way)."""
    problems = []
    for info in holdings.archives:
        item = holdings.by_archive.get(info.name, {}).get(info.service_ibi.key)
        if item is not None and item.state == "Original" and not item.transferable:
            continue
        if item is None:
            found = "which this Archive does not hold"
        elif item.state != "Original":
            found = f"which this Archive holds as {item.state}"
        else:
            found = "which this Archive holds as a transferable original"
        problems.append(
            Problem(
                info.name,
                "archive.yaml",
                "service-ibi",
                f"{info.service_ibi.text}, {found}",
                "the repository of the Archive's service in this Archive: state Original, "
                "transferable: false (storage model, rule 5)",
                "warning",
            )
        )
    return problems


def _original_problems(holdings: Holdings) -> list[Problem]:
    """Two originals of one IBI (rule 1) and copies without an original (rule 2): the
    keys mark_originals keeps in `conflicts` and `orphans`, in the crawl order of their
    first items (an Archive holds an item under every key it answers to, so the
    holders of a key in Archive order are every item of it, in crawl order)."""
    number = {info.name: n for n, info in enumerate(holdings.archives)}
    found = []
    for key in holdings.conflicts | holdings.orphans:
        held = [(number[i.name], item) for i, item in holdings.holders(key) if item.key == key]
        if held:
            first_archive, first = held[0]
            found.append(((first_archive, path_order(first)), [item for _, item in held]))
    problems = []
    for _, items in sorted(found, key=lambda pair: pair[0]):
        originals = [i for i in items if i.state == "Original"]
        if len(originals) > 1:
            for item in originals:
                others = ", ".join(i.archive for i in originals if i is not item)
                problems.append(
                    Problem(
                        item.archive,
                        _where(item),
                        "state",
                        f"Original, also claimed by {others}",
                        "one Archive holding the original (storage model, rule 1): two or more "
                        "Archives are under suspicion; an investigation is needed",
                    )
                )
        elif not originals:
            problems += [_orphan_copy(item) for item in items if item.state == "Copy"]
    return problems


def _orphan_copy(item: Item) -> Problem:
    return Problem(
        item.archive,
        _where(item),
        "state",
        "a Copy whose original no Archive holds",
        "an Original in some Archive (storage model, rule 2)",
        "warning",
    )


def _reference_problems(
    ordered: list[Item], known: _FirstHolders, left_out: dict[str, str]
) -> list[Problem]:
    """Dangling references, metadata that is not Metadata, next-edition loops."""
    problems = []
    for item in ordered:
        if item.next_edition is None and item.metadata is None and not item.translations:
            continue  # names no other item
        references = [("next-edition", item.next_edition), ("metadata", item.metadata)]
        references += [(f"translations.{tag}", ibi) for tag, ibi in item.translations]
        for key, ibi in references:
            if ibi is not None and ibi.key in left_out and ibi.key not in known:
                problems.append(
                    Problem(
                        item.archive,
                        _where(item),
                        key,
                        f"a reference to {ibi.text}, which {left_out[ibi.key]} holds but leaves out for errors",
                        "the IBI of a valid item",
                        "warning",
                    )
                )
            elif ibi is not None and ibi.key not in known:
                problems.append(
                    Problem(
                        item.archive,
                        _where(item),
                        key,
                        f"a dangling reference to {ibi.text}, which no Archive holds",
                        "the IBI of an item in one of the archives",
                        "warning",
                    )
                )
        if (
            item.metadata is not None
            and item.metadata.key in known
            and known[item.metadata.key].content_type != "Metadata"
        ):
            problems.append(
                Problem(
                    item.archive,
                    _where(item),
                    "metadata",
                    f"{item.metadata.text}, whose content-type is Data",
                    "the IBI of a Metadata item",
                    "warning",
                )
            )
    problems += _edition_loops(ordered, known)
    return problems


def _edition_loops(ordered: list[Item], known: _FirstHolders) -> list[Problem]:
    """A warning for each next-edition cycle, at the first item in crawl order whose
    chain reaches it.

    Linear in the items: a walk stops at an item an earlier walk went through, for from
    there it goes as that one did (to a last edition, or to a cycle already reported),
    so each item is walked once, not once per edition before it.  That holds for walks
    of first holders (``known``), where an item's key names that item only: a walk that
    meets another item (a copy under a key an earlier Archive holds) goes on to its end,
    and nothing it meets counts as walked."""
    problems = []
    reported: set[str] = set()
    walked: set[str] = set()  # keys of the first holders earlier walks went through
    for item in ordered:
        if item.next_edition is None:
            continue  # a last edition: no chain starts here
        holder = known.get(item.key)
        if (
            item.key in walked
            and holder is not None
            and holder.next_edition is not None
            and holder.next_edition.key == item.next_edition.key
        ):
            continue  # the walk of its key's holder (or of itself): nothing more to find
        seen = {item.key: 0}
        path = [item]
        current = item
        plain = holder is item  # only first holders met so far
        while current.next_edition is not None and current.next_edition.key in known:
            current = known[current.next_edition.key]
            if current.key in seen:
                cycle = [each.key for each in path[seen[current.key] :]]
                if not reported.intersection(cycle):
                    reported.update(cycle)
                    problems.append(
                        Problem(
                            item.archive,
                            _where(item),
                            "next-edition",
                            "a next-edition chain that loops: "
                            + " -> ".join(cycle + [current.key]),
                            "editions that end in a last edition",
                            "warning",
                        )
                    )
                # another item under a key met before ends the walk as a loop would:
                # the items after it were not followed
                plain = plain and path[seen[current.key]] is current
                break
            first = known.get(current.key) is current
            if first and plain and current.key in walked:
                break
            plain = plain and first
            seen[current.key] = len(path)
            path.append(current)
        if plain:
            walked.update(each.key for each in path)
    return problems
